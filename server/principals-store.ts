// The principals file as the server holds it: reloaded like the manifest, so that a revoked key
// or a narrowed scope applies from the next call. No MCP SDK code here.
import { parsePrincipals, type PrincipalRegistry } from './principals.js';
import { ReloadableFile, type ParseResult } from './reloadable.js';

export type PrincipalsStore = ReloadableFile<PrincipalRegistry>;

function principalsFromText(text: string): ParseResult<PrincipalRegistry> {
  const parsed = parsePrincipals(text);
  return parsed.ok ? { ok: true, value: parsed.registry } : parsed;
}

export function openPrincipalsStore(options: { file: string; log?: (line: string) => void }): Promise<PrincipalsStore> {
  return ReloadableFile.open({
    file: options.file,
    label: 'principals file',
    parse: principalsFromText,
    ...(options.log ? { log: options.log } : {}),
  });
}
