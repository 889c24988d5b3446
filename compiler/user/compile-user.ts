// Compile a user-defined capability (SPEC §8): the Markdown a user saves at run time, checked with
// the same rules as the Git registry plus the user-only rules, against the catalog the author can
// see now. Pure: the server supplies the catalog and stores the result.
import { lintAgainstCatalog, type CatalogCapability, type CatalogContext } from '../compile-one.js';
import { linkedCapabilities } from '../contract.js';
import { parseCapability } from '../parse.js';
import { renderBody } from '../render.js';
import type { AnyRule, ResolvedRuleSetting } from '../rule.js';
import { rules as registryRules } from '../rules/index.js';
import type { CapabilityDocument, Diagnostic, ManifestRuleSetting, Toolsets } from '../types.js';
import { userFrontmatter } from './rules/user-frontmatter.js';
import { userToolBindings } from './rules/user-tool-bindings.js';
import { userUses } from './rules/user-uses.js';

/** Where a user capability's diagnostics point; not a valid id, so it can never collide with one. */
export const USER_CAPABILITY_FILE = 'capabilities/~user/PROTOCOL.md';
export const DEFAULT_MAX_USER_MARKDOWN_BYTES = 64 * 1024;

/**
 * The registry rules a user capability is checked with: every rule that does not read what only a
 * registry in Git has (`meta.reads !== 'git'`). Their settings come from the manifest.
 */
export const USER_REGISTRY_RULES: readonly AnyRule[] = registryRules.filter((rule) => rule.meta.reads !== 'git');

/** The registry rules that apply to user capabilities, followed by the user-only rules. */
export const USER_CAPABILITY_RULES: readonly AnyRule[] = [...USER_REGISTRY_RULES, userFrontmatter, userToolBindings, userUses];

/** Which tools of a linked capability one step of the workflow uses. */
export interface ToolBinding {
  step: string;
  capability: string;
  tools: string[];
}

export interface CompiledUserCapability {
  name: string;
  description: string;
  whenToUse: string[];
  /** Declared: what the author may draw on. */
  uses: string[];
  /** Delivered: the capabilities the workflow actually links to, sorted. */
  dependencies: string[];
  toolBindings: ToolBinding[];
  /** The body as served, `capability:` links rendered as catalog instructions. */
  protocol: string;
}

export type UserCompileResult = { ok: true; capability: CompiledUserCapability; diagnostics: Diagnostic[] } | { ok: false; diagnostics: Diagnostic[] };

function sizeDiagnostic(bytes: number, limit: number): Diagnostic {
  return {
    file: USER_CAPABILITY_FILE,
    line: 1,
    column: 1,
    endLine: 1,
    endColumn: 1,
    severity: 'error',
    ruleId: 'user-frontmatter',
    message: `the capability is ${bytes} bytes, over the ${limit}-byte limit for user capabilities`,
  };
}

/** A save whose compile did not finish within the server's budget (time or memory). */
export function budgetDiagnostic(budgetMs: number): Diagnostic {
  return {
    ...sizeDiagnostic(0, 0),
    message: `the capability could not be checked within the server's budget (${budgetMs} ms); make it shorter or simpler (fewer, shorter paragraphs, lists and tables) and save again`,
  };
}

/** In `u` mode a surrogate that is not half of a pair is matched as one code point. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * @param catalog the capabilities and toolsets the author can see right now; links to anything
 *   else are reported exactly like links to capabilities that do not exist.
 */
export function compileUserCapability(
  markdown: string,
  catalog: CatalogContext,
  options: {
    maxBytes?: number;
    /** The name protocols are served under, for the rendered `capability:` links (PROTOCOL_TOOL by default). */
    protocolTool?: string;
    /** The registry's settings as the manifest carries them (`Manifest.rules`); defaults otherwise. */
    settings?: Readonly<Record<string, ManifestRuleSetting>>;
    /** Checked after the user rules (the compile pool's test hook for a slow rule). */
    extraRules?: readonly AnyRule[];
  } = {},
): UserCompileResult {
  const limit = options.maxBytes ?? DEFAULT_MAX_USER_MARKDOWN_BYTES;
  const bytes = Buffer.byteLength(markdown, 'utf8');
  if (bytes > limit) return { ok: false, diagnostics: [sizeDiagnostic(bytes, limit)] };
  if (markdown.includes('\u0000')) {
    return { ok: false, diagnostics: [{ ...sizeDiagnostic(0, limit), message: 'the capability contains a NUL character; it must be text' }] };
  }
  // A lone UTF-16 surrogate is no character: a store would keep it as U+FFFD, so what is served
  // would differ from what was checked and acknowledged.
  if (LONE_SURROGATE.test(markdown)) {
    return {
      ok: false,
      diagnostics: [{ ...sizeDiagnostic(0, limit), message: 'the capability contains a lone UTF-16 surrogate; it must be well-formed Unicode text' }],
    };
  }

  const document = parseCapability(USER_CAPABILITY_FILE, markdown);
  const dependencies = linkedCapabilities(document.links);
  const byId = new Map(catalog.capabilities.map((capability) => [capability.id, capability]));
  // The workflow may name the tools of every capability it links to.
  const reachableToolsets = [
    ...new Set(dependencies.flatMap((id) => [...(byId.get(id)?.requiredToolsets ?? []), ...(byId.get(id)?.optionalToolsets ?? [])])),
  ].sort();
  const diagnostics = lintAgainstCatalog(document, catalog, {
    rules: options.extraRules ? [...USER_CAPABILITY_RULES, ...options.extraRules] : USER_CAPABILITY_RULES,
    settings: new Map<string, ResolvedRuleSetting>(Object.entries(options.settings ?? {})),
    derived: { requiredToolsets: [], optionalToolsets: reachableToolsets },
  });
  if (diagnostics.some((d) => d.severity === 'error')) return { ok: false, diagnostics };

  const data = document.frontmatter.data as unknown as Omit<CompiledUserCapability, 'dependencies' | 'protocol'>;
  return {
    ok: true,
    diagnostics,
    capability: {
      name: data.name,
      description: data.description,
      whenToUse: data.whenToUse,
      uses: data.uses,
      dependencies,
      toolBindings: data.toolBindings ?? [],
      protocol: servedProtocol(document, options.protocolTool),
    },
  };
}

/**
 * A user capability's protocol as `get_capability_protocol` serves it: the body, `capability:` links
 * rendered as catalog instructions naming `protocolTool`. Made in the compile worker at save, and
 * from the stored Markdown for a revision the server did not compile; both must give the same bytes.
 */
function servedProtocol(document: CapabilityDocument, protocolTool?: string): string {
  return renderBody(document, protocolTool).replace(/^\n+/, '');
}

/** The served protocol of a stored revision (its Markdown was checked when it was saved). */
export function renderStoredProtocol(markdown: string, protocolTool: string): string {
  return servedProtocol(parseCapability(USER_CAPABILITY_FILE, markdown), protocolTool);
}

/**
 * The catalog an author compiles against: the capabilities `visible` allows and the toolsets those
 * name, and nothing else. Links to anything outside it are reported like links to missing ones.
 */
export function visibleCatalog(manifest: { capabilities: readonly CatalogCapability[]; toolsets: Toolsets }, visible: (id: string) => boolean): CatalogContext {
  const capabilities = manifest.capabilities.filter((capability) => visible(capability.id));
  // No prototype: a toolset id is data, never a key that could reach Object.prototype.
  const toolsets = Object.create(null) as Toolsets;
  for (const capability of capabilities) {
    for (const id of [...capability.requiredToolsets, ...(capability.optionalToolsets ?? [])]) {
      const toolset = manifest.toolsets[id];
      if (toolset !== undefined && Object.hasOwn(manifest.toolsets, id)) toolsets[id] = toolset;
    }
  }
  return { capabilities, toolsets };
}
