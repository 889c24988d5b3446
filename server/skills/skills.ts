// The MCP Skills extension's domain (docs/skills.md): one skill per capability the caller can see
// now, under the visibility of `list_capabilities` (the Catalog, and UserCapabilities for an owner's
// own), each entry with the digest and size of exactly the `SKILL.md` bytes a read returns. Every
// answer is decided against the caller at the moment of the call. No MCP SDK code here.
import { Buffer } from 'node:buffer';
import { renderAgentSkill, skillName, skillSourceOf, type SkillFrontmatter } from '../../compiler/agent-skill.js';
import { sha256Hex } from '../../compiler/canonical.js';
import type { ToolNames } from '../../compiler/contract.js';
import type { ManifestCapability } from '../../compiler/types.js';
import type { Catalog, CatalogListing, ServedCapability } from '../catalog.js';
import type { Caller } from '../identity.js';
import { invalidCursorMessage, pageOf } from '../pages.js';
import { isUserCapabilityId, mayReadUserCapabilities, STORE_UNAVAILABLE_MESSAGE, type UserCapabilities, type UserCatalogEntry } from '../user-capabilities.js';

export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';
export const SKILL_URI_PREFIX = 'skill://';
const SKILL_FILE = 'SKILL.md';
/** User skills live under this path segment, so their URIs never meet a platform skill's. */
const USER_SKILL_PATH = 'user';
/** How long a host may treat a listing as current; a reload or lost scope shows on the next call regardless. */
export const SKILLS_TTL_MS = 60_000;
/** Entries per `skills/list` page. */
export const SKILLS_PAGE_SIZE = 200;
/** Longest stretch a listing's first rendering keeps the event loop before letting requests run. */
export const RENDER_SLICE_MS = 10;

const yieldToRequests = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export interface SkillResource {
  uri: string;
  /** `sha256:<hex>` of the UTF-8 bytes of `SKILL.md` as `resources/read` returns them. */
  digest: string;
  size: number;
}

export interface SkillEntry {
  uri: string;
  frontmatter: SkillFrontmatter;
  resources: SkillResource[];
}

/** A skill the caller may read now: its entry and the exact `SKILL.md` text. */
export interface ServedSkill {
  entry: SkillEntry;
  text: string;
}

/** The caller as the credentials say at the moment it is called (a user skill that waited for a render is authorized again). */
type CallerNow = () => Caller | Promise<Caller>;

/**
 * Known failures the adapter turns into JSON-RPC errors; `not-accessible` is the uniform one,
 * `unavailable` a user skill that cannot be served now (the store does not answer, or the server
 * cannot prepare it now: the message says which).
 */
export type SkillsErrorCode = 'not-accessible' | 'invalid-cursor' | 'unavailable';

export class SkillsError extends Error {
  constructor(
    readonly code: SkillsErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SkillsError';
  }
}

/** `skill://<name>/SKILL.md` for a platform capability, `skill://user/<name>/SKILL.md` for a user one. */
export function skillUri(id: string): string | undefined {
  const name = skillName(id);
  if (name === undefined) return undefined;
  return isUserCapabilityId(id) ? `${SKILL_URI_PREFIX}${USER_SKILL_PATH}/${name}/${SKILL_FILE}` : `${SKILL_URI_PREFIX}${name}/${SKILL_FILE}`;
}

/**
 * The capability id a skill URI names. Taken as is (never decoded or normalized) and checked by
 * mapping back: only the exact URI `skillUri` gives for some id names it, so `..`, `%2e`, extra
 * segments, a query or a fragment name nothing.
 */
export function capabilityIdOfSkillUri(uri: string): string | undefined {
  if (!uri.startsWith(SKILL_URI_PREFIX) || !uri.endsWith(`/${SKILL_FILE}`)) return undefined;
  const segments = uri.slice(SKILL_URI_PREFIX.length, -`/${SKILL_FILE}`.length).split('/');
  const id =
    segments.length === 1
      ? segments[0]
      : segments.length === 2 && segments[0] === USER_SKILL_PATH
        ? `user:${(segments[1] ?? '').replace(/^user-/, '')}`
        : undefined;
  return id !== undefined && skillUri(id) === uri ? id : undefined;
}

export function isSkillUri(uri: string): boolean {
  return uri.startsWith(SKILL_URI_PREFIX);
}

function served(uri: string, frontmatter: SkillFrontmatter, text: string): ServedSkill {
  const bytes = Buffer.from(text, 'utf8');
  const entry = { uri, frontmatter, resources: [{ uri, digest: `sha256:${sha256Hex(bytes)}`, size: bytes.length }] };
  return Object.freeze({ entry, text });
}

export class Skills {
  readonly #protocolTool: string;
  /** Rendered once per served capability (a manifest load makes new ones). */
  readonly #platform = new WeakMap<ServedCapability, ServedSkill>();
  /** Entries of a caller class's listing, as long as the catalog keeps that listing (being rendered, or rendered). */
  readonly #listings = new WeakMap<CatalogListing, Promise<readonly SkillEntry[]>>();
  readonly #manifestCapabilities = new WeakMap<Catalog, ReadonlyMap<string, ManifestCapability>>();

  constructor(names: ToolNames) {
    this.#protocolTool = names.getCapabilityProtocol;
  }

  /** Every skill the caller may see now: the platform ones in catalog order, then their own user ones. */
  async list(caller: Caller, catalog: Catalog, users: UserCapabilities | undefined, callerNow: CallerNow = () => caller): Promise<readonly SkillEntry[]> {
    if (users === undefined) return this.#platformEntries(catalog, caller, catalog.visibleCapabilities(caller.grants));
    const listing = await users.listing(caller, catalog);
    const platform = await this.#platformEntries(catalog, caller, listing.platform);
    if (listing.user.length === 0) return platform;
    const own: SkillEntry[] = [];
    // A render that waited authorizes the caller again (users.load); one the credentials no longer
    // prove refuses the whole list, not only that skill: the platform skills and the owner's others,
    // rendered before, would otherwise still be listed to a key revoked meanwhile.
    let revoked = false;
    const checked: CallerNow = async () => {
      const now = await callerNow();
      if (!mayReadUserCapabilities(now) || !mayReadUserCapabilities(caller) || now.owner !== caller.owner) revoked = true;
      return now;
    };
    for (const entry of listing.user) {
      // One that cannot be served now (the store stopped answering after the listing, the owner's
      // renders are busy, it overran the budget) is left out, as in an outage: it must not take the
      // platform skills and the owner's others down with it. skills/get of it says why.
      const skill = await this.#userSkill(caller, catalog, users, entry, checked).catch((error: unknown) => {
        if (error instanceof SkillsError && error.code === 'unavailable') return undefined;
        throw error;
      });
      if (revoked) throw new SkillsError('not-accessible', 'not accessible');
      if (skill !== undefined) own.push(skill.entry);
    }
    return [...platform, ...own];
  }

  /**
   * The skill at `uri` if the caller may see it now. Unknown, invisible, malformed and traversing
   * URIs (and non-strings) all throw the one `not-accessible` error.
   */
  async get(caller: Caller, catalog: Catalog, users: UserCapabilities | undefined, uri: unknown, callerNow: CallerNow = () => caller): Promise<ServedSkill> {
    const id = typeof uri === 'string' ? capabilityIdOfSkillUri(uri) : undefined;
    let skill: ServedSkill | undefined;
    if (id !== undefined && isUserCapabilityId(id)) {
      if (users !== undefined) {
        const listing = await users.listing(caller, catalog);
        if (listing.unavailable !== undefined) throw new SkillsError('unavailable', STORE_UNAVAILABLE_MESSAGE);
        const entry = listing.user.find((candidate) => candidate.id === id);
        skill = entry === undefined ? undefined : await this.#userSkill(caller, catalog, users, entry, callerNow);
      }
    } else if (id !== undefined) {
      const capability = catalog.accessibleCapability(caller.grants, id);
      skill = capability === undefined ? undefined : this.#platformSkill(catalog, capability);
    }
    if (skill === undefined) throw new SkillsError('not-accessible', 'not accessible');
    return skill;
  }

  /** One build per listing: concurrent first calls of a class wait for the same one. */
  #platformEntries(catalog: Catalog, caller: Caller, listing: CatalogListing): Promise<readonly SkillEntry[]> {
    let entries = this.#listings.get(listing);
    if (entries === undefined) {
      entries = this.#renderEntries(catalog, caller, listing);
      this.#listings.set(listing, entries);
      entries.catch(() => this.#listings.delete(listing));
    }
    return entries;
  }

  /**
   * The listing's skills, rendered on its first call after a manifest load (at 10,000 capabilities,
   * most of a second) in slices of at most RENDER_SLICE_MS, with other requests served between them.
   */
  async #renderEntries(catalog: Catalog, caller: Caller, listing: CatalogListing): Promise<readonly SkillEntry[]> {
    const built: SkillEntry[] = [];
    let until = performance.now() + RENDER_SLICE_MS;
    for (const row of listing.capabilities) {
      if (performance.now() >= until) {
        await yieldToRequests();
        until = performance.now() + RENDER_SLICE_MS;
      }
      const capability = catalog.accessibleCapability(caller.grants, row.id);
      if (capability !== undefined) built.push(this.#platformSkill(catalog, capability).entry);
    }
    return Object.freeze(built);
  }

  #platformSkill(catalog: Catalog, capability: ServedCapability): ServedSkill {
    let skill = this.#platform.get(capability);
    if (skill === undefined) {
      const source = this.#manifestCapability(catalog, capability.id);
      const uri = skillUri(capability.id);
      if (source === undefined || uri === undefined) throw new Error(`capability ${capability.id} is served but has no skill`);
      const rendered = renderAgentSkill(skillSourceOf(source, capability.protocol), { protocolTool: this.#protocolTool, skillReference: skillReference });
      skill = served(uri, rendered.frontmatter, rendered.text);
      this.#platform.set(capability, skill);
    }
    return skill;
  }

  #manifestCapability(catalog: Catalog, id: string): ManifestCapability | undefined {
    let byId = this.#manifestCapabilities.get(catalog);
    if (byId === undefined) {
      byId = new Map(catalog.manifest.capabilities.map((capability) => [capability.id, capability]));
      this.#manifestCapabilities.set(catalog, byId);
    }
    return byId.get(id);
  }

  async #userSkill(caller: Caller, catalog: Catalog, users: UserCapabilities, entry: UserCatalogEntry, callerNow: CallerNow): Promise<ServedSkill | undefined> {
    const outcome = await users.load(caller, catalog, entry.id, callerNow);
    if (outcome.kind === 'failed') throw new SkillsError('unavailable', outcome.message);
    if (outcome.kind === 'not-accessible') return undefined;
    const uri = skillUri(entry.id);
    if (uri === undefined) return undefined;
    const { capability } = outcome;
    const rendered = renderAgentSkill(
      {
        id: entry.id,
        name: entry.name,
        description: entry.description,
        whenToUse: entry.whenToUse,
        protocolVersion: capability.revision,
        protocolUpdated: capability.updatedAt,
        requiredToolsets: [],
        dependencies: capability.dependencies,
        protocol: capability.protocol,
        isUserDefined: true,
      },
      { protocolTool: this.#protocolTool, skillReference },
    );
    return served(uri, rendered.frontmatter, rendered.text);
  }
}

/** Over MCP a linked skill is named by its URI too, so a host can load it with `skills/get`. */
function skillReference(id: string, name: string): string {
  return `the skill \`${name}\` (\`${skillUri(id) ?? name}\`)`;
}

export interface SkillsPage {
  skills: readonly SkillEntry[];
  nextCursor?: string;
}

/** One page of a listing (server/pages.ts). */
export function skillsPage(entries: readonly SkillEntry[], cursor: unknown): SkillsPage {
  const page = pageOf(entries, cursor, SKILLS_PAGE_SIZE);
  if (page === undefined) throw new SkillsError('invalid-cursor', invalidCursorMessage('skills/list'));
  return page.nextCursor === undefined ? { skills: page.items } : { skills: page.items, nextCursor: page.nextCursor };
}
