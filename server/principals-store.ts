// The principals file as the server holds it: reloaded like the manifest, so that a revoked key
// or a narrowed scope applies from the next call. No MCP SDK code here.
import { parsePrincipals, type PrincipalRegistry } from './principals.js';
import { DEFAULT_READ_LIMITS, type ReadLimits } from './read-file.js';
import { ReloadableFile, type ParseResult } from './reloadable.js';
import type { LineLog } from './log.js';

export type PrincipalsStore = ReloadableFile<PrincipalRegistry>;

/** About 40,000 principals; the file is read again on the request path when it changes. */
export const PRINCIPALS_READ_LIMITS: ReadLimits = { ...DEFAULT_READ_LIMITS, maxBytes: 8 * 1024 * 1024 };

function principalsFromText(text: string): ParseResult<PrincipalRegistry> {
  const parsed = parsePrincipals(text);
  return parsed.ok ? { ok: true, value: parsed.registry } : parsed;
}

export function openPrincipalsStore(options: { file: string; limits?: ReadLimits | undefined; log?: LineLog }): Promise<PrincipalsStore> {
  return ReloadableFile.open({
    file: options.file,
    label: 'principals file',
    parse: principalsFromText,
    describe: (registry) => `(${registry.size} principals)`,
    limits: options.limits ?? PRINCIPALS_READ_LIMITS,
    ...(options.log ? { log: options.log } : {}),
  });
}
