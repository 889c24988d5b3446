// One capability as an Agent Skill (agentskills.io): the `SKILL.md` text with its exact frontmatter,
// the skill's name, and the body with catalog instructions rewritten to name the skill to load. The
// MCP Skills extension (`capreg serve`) and `capreg export --format agent-skills` both render through
// here, so a host that reads either sees the same frontmatter. Pure: same input, same bytes.
import { PROTOCOL_TOOL } from './contract.js';
import { truncate } from './formatters/escape.js';
import { escapeRegExp } from './literal-trie.js';
import { catalogInstruction } from './render.js';
import type { ManifestCapability } from './types.js';

/** Agent Skills limits the reference validator enforces. */
export const MAX_SKILL_NAME_LENGTH = 64;
export const MAX_SKILL_DESCRIPTION_LENGTH = 1024;

const USER_PREFIX = 'user:';
/** Names of user capabilities: `user:<base32>` becomes `user-<base32>`. */
const USER_NAME_PREFIX = 'user-';
const SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/**
 * The Agent Skills `name` of a capability id. Platform ids already follow the name rules (lowercase
 * letters, digits, single inner hyphens, at most 64) and map to themselves; a user id `user:<id>`
 * maps to `user-<id>`, which is one-to-one because user ids are lowercase base32. Undefined for an
 * id that has no valid name (never produced by capreg).
 */
export function skillName(id: string): string | undefined {
  const name = id.startsWith(USER_PREFIX) ? USER_NAME_PREFIX + id.slice(USER_PREFIX.length) : id;
  return name.length <= MAX_SKILL_NAME_LENGTH && SKILL_NAME.test(name) ? name : undefined;
}

/** What a skill is rendered from: a manifest capability or a user capability, as served. */
export interface SkillSource {
  id: string;
  name: string;
  description: string;
  whenToUse: readonly string[];
  protocolVersion: string;
  /** Date (platform) or timestamp (user) of the last protocol change. */
  protocolUpdated: string;
  requiredToolsets: readonly string[];
  tags?: readonly string[] | undefined;
  lifecyclePhase?: string | undefined;
  /** Capability ids the protocol links to, sorted. */
  dependencies: readonly string[];
  /** The protocol as served (a leading `---` version frontmatter, if any, is dropped). */
  protocol: string;
  isUserDefined?: boolean;
}

/** Agent Skills metadata is a string → string map; capreg's fields go there (docs/skills.md). */
export type SkillMetadata = Record<string, string>;

export interface SkillFrontmatter {
  name: string;
  description: string;
  metadata: SkillMetadata;
}

export interface RenderedSkill {
  name: string;
  frontmatter: SkillFrontmatter;
  /** The whole `SKILL.md`. */
  text: string;
  /** The body alone (what the size budgets count). */
  body: string;
}

export interface RenderSkillOptions {
  /** The protocol tool the served protocol's catalog instructions name (the server's prefixed name). */
  protocolTool?: string;
  /** How the body names a linked capability's skill (default: the skill's name). */
  skillReference?: (id: string, name: string) => string;
}

export function renderAgentSkill(source: SkillSource, options: RenderSkillOptions = {}): RenderedSkill {
  const name = skillName(source.id);
  if (name === undefined) throw new RangeError(`capability id ${JSON.stringify(source.id)} has no valid Agent Skills name`);
  const frontmatter: SkillFrontmatter = { name, description: skillDescription(source), metadata: skillMetadata(source) };
  const body = rewriteCatalogInstructions(stripVersionFrontmatter(source.protocol), source.dependencies, options);
  const text = `---\n${frontmatterYaml(frontmatter)}---\n\n${body}`;
  return { name, frontmatter, text, body };
}

/**
 * The description, then the triggers (`whenToUse`) that fit within the 1,024-character limit, so a
 * host that picks skills by description sees when to use it. Whole triggers only, in order.
 */
function skillDescription(source: SkillSource): string {
  const base = truncate(source.description.trim(), MAX_SKILL_DESCRIPTION_LENGTH);
  const triggers: string[] = [];
  const render = (list: string[]): string => (list.length === 0 ? base : `${base} Use it for requests like: ${list.map((t) => JSON.stringify(t)).join(', ')}.`);
  for (const trigger of source.whenToUse) {
    if (render([...triggers, trigger]).length > MAX_SKILL_DESCRIPTION_LENGTH) break;
    triggers.push(trigger);
  }
  return render(triggers);
}

/** capreg's own fields; lists are space-separated ids (ids contain no spaces). Empty ones are left out. */
function skillMetadata(source: SkillSource): SkillMetadata {
  const metadata: SkillMetadata = { 'capreg-id': source.id, version: source.protocolVersion, updated: source.protocolUpdated };
  if (source.lifecyclePhase !== undefined) metadata['lifecycle-phase'] = source.lifecyclePhase;
  const lists: [string, readonly string[] | undefined][] = [
    ['tags', source.tags],
    ['required-toolsets', source.requiredToolsets],
    ['dependencies', source.dependencies],
  ];
  for (const [key, list] of lists) if (list !== undefined && list.length > 0) metadata[key] = list.join(' ');
  if (source.isUserDefined === true) metadata['user-defined'] = 'true';
  return metadata;
}

const VERSION_FRONTMATTER = /^---\n[\s\S]*?\n---\n/;

function stripVersionFrontmatter(protocol: string): string {
  const body = protocol.replace(VERSION_FRONTMATTER, '').replace(/^\n+/, '');
  return body.endsWith('\n') ? body : `${body}\n`;
}

/** Stands for the id in the instruction text: no id holds it. */
const ID_SLOT = '\u0000';

/**
 * The served protocol tells the agent to load a linked capability with the protocol tool; as a
 * skill, it names the skill to load instead. The instruction text is the compiler's
 * (`catalogInstruction`), so the suffix after its label is found exactly, never guessed. One pass
 * over the body finds every instruction and rewrites those of `dependencies`: a pass per dependency
 * made a user capability's skill (100 dependencies, ~150 KB rendered) cost ~50 ms on each request.
 */
function rewriteCatalogInstructions(body: string, dependencies: readonly string[], options: RenderSkillOptions): string {
  const protocolTool = options.protocolTool ?? PROTOCOL_TOOL;
  const reference = options.skillReference ?? ((_id: string, name: string) => `the skill \`${name}\``);
  const names = new Map<string, string>();
  for (const id of dependencies) {
    const name = skillName(id);
    if (name !== undefined) names.set(id, name);
  }
  if (names.size === 0) return body;
  // The instruction's suffix before and after its id (which holds no quote), from the compiler's own text.
  const [before, after] = catalogInstruction(ID_SLOT, ID_SLOT, protocolTool).slice(`\`${ID_SLOT}\``.length).split(ID_SLOT) as [string, string];
  const served = new RegExp(`${escapeRegExp(before)}([^"]*)${escapeRegExp(after)}`, 'g');
  return body.replace(served, (instruction, id: string) => {
    const name = names.get(id);
    return name === undefined
      ? instruction
      : ` (a separate skill: load ${reference(id, name)} and follow it; if it is not available to you or does not load, tell the user that this part cannot be done here and do not improvise it)`;
  });
}

/**
 * Characters JSON leaves as they are but a YAML file may not hold as they are: DEL, the C1 controls and
 * U+FFFE/U+FFFF are not printable (YAML 1.2; PyYAML refuses the file), NEL, LS and PS are line breaks
 * to a YAML 1.1 reader (NEL is folded into a space), and a BOM is invisible. Written as `\uXXXX`.
 */
const YAML_ESCAPED = /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/g;

/**
 * The frontmatter as YAML: every value a double-quoted JSON string (valid YAML, no type guessing),
 * with YAML_ESCAPED characters escaped. A run of three hyphens is escaped so that no reader
 * splitting the file on `---` cuts it short.
 */
export function frontmatterYaml(frontmatter: SkillFrontmatter): string {
  const quote = (value: string): string =>
    JSON.stringify(value)
      .replace(/-(?=--)/g, '\\x2d')
      .replace(YAML_ESCAPED, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const lines = [`name: ${quote(frontmatter.name)}`, `description: ${quote(frontmatter.description)}`, 'metadata:'];
  for (const [key, value] of Object.entries(frontmatter.metadata)) lines.push(`  ${quote(key)}: ${quote(value)}`);
  return `${lines.join('\n')}\n`;
}

/** A manifest capability as a skill source; `protocol` is the text as served (the server's prefixed tool). */
export function skillSourceOf(capability: ManifestCapability, protocol: string = capability.protocol): SkillSource {
  return {
    id: capability.id,
    name: capability.name,
    description: capability.description,
    whenToUse: capability.whenToUse,
    protocolVersion: capability.protocolVersion,
    protocolUpdated: capability.protocolUpdated,
    requiredToolsets: capability.requiredToolsets,
    tags: capability.tags,
    lifecyclePhase: capability.lifecyclePhase,
    dependencies: capability.references,
    protocol,
  };
}
