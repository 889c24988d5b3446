// What `capreg export --format agent-skills` writes, decided in memory: one `<name>/SKILL.md` per
// capability to export, the Agent Skills budgets checked for each, and with `marketplace` the
// `.claude-plugin/marketplace.json` a Claude Code plugin marketplace reads. Pure: the same manifest
// and selection give the same files, byte for byte; the CLI only writes them.
import { renderAgentSkill, skillSourceOf } from './agent-skill.js';
import { countTokens } from './tokens.js';
import type { Manifest, ManifestCapability } from './types.js';

/** The Agent Skills format's budgets for a SKILL.md body. */
export const MAX_SKILL_BODY_TOKENS = 5_000;
export const MAX_SKILL_BODY_LINES = 500;
export const MARKETPLACE_FILE = '.claude-plugin/marketplace.json';
export const PLUGIN_NAME = 'capreg';

export interface ExportFile {
  /** Relative to the export folder, `/` separators. */
  path: string;
  content: string;
}

export type ExportPlan = { ok: true; files: ExportFile[]; skills: string[] } | { ok: false; problems: string[] };

export interface ExportOptions {
  marketplace: boolean;
}

/**
 * The files for `capabilities` (already filtered to what the caller may see, in manifest order).
 * A skill over a budget is a problem naming it and the measure; nothing is exported then.
 */
export function planAgentSkillsExport(manifest: Manifest, capabilities: readonly ManifestCapability[], options: ExportOptions): ExportPlan {
  const files: ExportFile[] = [];
  const problems: string[] = [];
  const skills: string[] = [];
  for (const capability of capabilities) {
    const skill = renderAgentSkill(skillSourceOf(capability));
    const lines = skill.body.split('\n').length - (skill.body.endsWith('\n') ? 1 : 0);
    if (lines >= MAX_SKILL_BODY_LINES)
      problems.push(`${skill.name}: the body is ${lines} lines; Agent Skills bodies stay under ${MAX_SKILL_BODY_LINES} (move detail to references)`);
    const tokens = countTokens(skill.body);
    if (tokens >= MAX_SKILL_BODY_TOKENS)
      problems.push(`${skill.name}: the body is ${tokens} tokens; Agent Skills bodies stay under ${MAX_SKILL_BODY_TOKENS} (move detail to references)`);
    files.push({ path: `${skill.name}/SKILL.md`, content: skill.text });
    skills.push(skill.name);
  }
  if (problems.length > 0) return { ok: false, problems };
  if (options.marketplace) files.push({ path: MARKETPLACE_FILE, content: marketplaceJson(manifest, skills) });
  return { ok: true, files, skills };
}

/**
 * One plugin holding every exported skill. Its version comes from the manifest revision (a content
 * digest), so an unchanged registry keeps its version and any change gives a new one.
 */
export function marketplaceJson(manifest: Manifest, skills: readonly string[]): string {
  const marketplace = {
    name: PLUGIN_NAME,
    owner: { name: PLUGIN_NAME },
    plugins: [
      {
        name: PLUGIN_NAME,
        description: 'The capability protocols of this capreg registry, as Agent Skills.',
        version: pluginVersion(manifest.revision),
        source: './',
        strict: false,
        skills: skills.map((name) => `./${name}`),
      },
    ],
  };
  return `${JSON.stringify(marketplace, null, 2)}\n`;
}

/** `0.0.0-<the revision's first 16 hex digits>`: a valid semver that changes exactly with the revision. */
export function pluginVersion(revision: string): string {
  return `0.0.0-${revision.replace(/^sha256:/, '').slice(0, 16)}`;
}
