// Scopes and what they grant (SPEC §6): a scope is `<toolset>:<action>`, and a higher action
// includes the lower ones (read < write < admin). No MCP SDK code here.
import type { ToolAction } from '../compiler/types.js';

const ACTION_RANK: Readonly<Record<ToolAction, number>> = { read: 1, write: 2, admin: 3 };

// Toolset ids follow the capability id shape; a few extra characters are tolerated so that a
// registry with unusual toolset names still gets exact (never fuzzy) matching.
const SCOPE_PATTERN = /^([A-Za-z0-9][A-Za-z0-9._-]*):(read|write|admin)$/;

/** What a scope must look like, for messages that refuse one. */
export const SCOPE_FORMAT = '"<toolset>:<action>" with action read, write or admin';

export interface Scope {
  toolset: string;
  action: ToolAction;
}

/** `<toolset>:<action>` → Scope; anything else (e.g. an OAuth `openid` scope) → undefined. */
export function parseScope(text: string): Scope | undefined {
  const match = SCOPE_PATTERN.exec(text);
  if (!match) return undefined;
  return { toolset: match[1] as string, action: match[2] as ToolAction };
}

/**
 * The highest action a caller holds per toolset. Built once per caller per call from its scopes;
 * a Map, so that toolset ids such as `__proto__` are plain keys.
 */
export class Grants {
  readonly #rank = new Map<string, number>();

  constructor(scopes: Iterable<string>) {
    for (const text of scopes) {
      const scope = parseScope(text);
      if (!scope) continue;
      const rank = ACTION_RANK[scope.action];
      if (rank > (this.#rank.get(scope.toolset) ?? 0)) this.#rank.set(scope.toolset, rank);
    }
  }

  static readonly none = new Grants([]);

  /** True when the caller holds `action` or a higher action on `toolset`. */
  allows(toolset: string, action: ToolAction): boolean {
    return (this.#rank.get(toolset) ?? 0) >= ACTION_RANK[action];
  }

  /** Toolsets on which the caller holds at least `read`. */
  readableToolsets(): string[] {
    return [...this.#rank.keys()];
  }
}

/** SPEC §6: visible iff the caller has at least `read` on every required toolset. */
export function canUse(grants: Grants, requiredToolsets: readonly string[]): boolean {
  for (const toolset of requiredToolsets) {
    if (!grants.allows(toolset, 'read')) return false;
  }
  return true;
}
