// The protocol as served to agents: a short frontmatter with only the version fields, then the body
// with every `capability:` link turned into an instruction to load that capability through the catalog,
// then the sections rendered from the frontmatter an agent needs to follow it (renderMetadata).
import { PROTOCOL_TOOL, capabilityTarget } from './contract.js';
import { bodyText } from './mentions.js';
import type { CapabilityDocument, LinkRef } from './types.js';

export function catalogInstruction(text: string, id: string, protocolTool = PROTOCOL_TOOL): string {
  const label = text.trim() === '' || text.trim() === id ? `\`${id}\`` : `${text.trim()} (\`${id}\`)`;
  // The target may be invisible to this caller (another toolset) or gone: say what to do then, so
  // the agent stops instead of improvising the other workflow from its name.
  return `${label} (a separate capability: call \`${protocolTool}\` with \`{"capabilityId": "${id}"}\` to load its protocol from the catalog; if it is not in your catalog or does not load, tell the user that this part cannot be done here and do not improvise it)`;
}

export function renderBody(document: CapabilityDocument, protocolTool = PROTOCOL_TOOL): string {
  const positions = bodyText(document);
  const replacements = document.links
    .filter((link) => link.kind === 'link' && capabilityTarget(link.url) !== undefined)
    .map((link) => ({ link, offsets: positions.offsets(link.range) }))
    .filter((entry): entry is { link: LinkRef; offsets: { start: number; end: number } } => entry.offsets !== undefined)
    .sort((a, b) => b.offsets.start - a.offsets.start);
  let body = document.body;
  for (const { link, offsets } of replacements) {
    body = body.slice(0, offsets.start) + catalogInstruction(link.text, capabilityTarget(link.url) ?? '', protocolTool) + body.slice(offsets.end);
  }
  return body;
}

export function renderProtocol(document: CapabilityDocument, version: string, updated: string, protocolTool = PROTOCOL_TOOL): string {
  const body = renderBody(document, protocolTool).replace(/^\n+/, '');
  const metadata = renderMetadata(document.frontmatter.data);
  const text = metadata === '' ? (body.endsWith('\n') ? body : `${body}\n`) : `${body.trim() === '' ? '' : `${body.trimEnd()}\n\n`}${metadata}\n`;
  return `---\nprotocol_version: ${version}\nprotocol_updated: ${updated}\n---\n\n${text}`;
}

// The frontmatter an agent needs to follow the protocol (SPEC §9), rendered after the body so that
// every surface serving the protocol text (get_capability_protocol, resources, skills, export)
// carries it. Read defensively: evals render capabilities whose frontmatter may not have passed lint.
const SEVERITY_MEANING: Record<string, string> = {
  block: 'never act on it',
  warn: 'act on it only after telling the user',
  'must-ignore': 'dismiss it and carry on',
};

/** The Markdown sections rendered from `constraints`, `evidenceTypes`, `scopeConstraints` and the schemas; '' when none is set. */
export function renderMetadata(frontmatter: Record<string, unknown> | undefined): string {
  const data = frontmatter ?? {};
  const sections: string[] = [];
  const constraints = recordsOf(data.constraints).filter(
    (item): item is { rationalization: string; rebuttal: string; severity: string } =>
      typeof item.rationalization === 'string' && typeof item.rebuttal === 'string' && typeof item.severity === 'string',
  );
  if (constraints.length > 0) {
    const rows = constraints.map((item) => `| ${cell(item.rationalization)} | ${cell(item.rebuttal)} | ${cell(item.severity)} |`);
    const used = [...new Set(constraints.map((item) => item.severity))].filter((severity) => SEVERITY_MEANING[severity] !== undefined);
    const legend = used.map((severity) => `\`${severity}\`: ${SEVERITY_MEANING[severity] as string}`).join('; ');
    sections.push(
      `## Rationalizations to reject\n\nIf you catch yourself thinking one of these, answer it with its rebuttal.${legend === '' ? '' : ` Severity ${legend}.`}\n\n| Rationalization | Rebuttal | Severity |\n| --- | --- | --- |\n${rows.join('\n')}`,
    );
  }
  const evidence = stringsOf(data.evidenceTypes);
  if (evidence.length > 0) {
    sections.push(`## Evidence before claiming done\n\nBefore you say the work is done, show: ${evidence.map((type) => `\`${type}\``).join(', ')}.`);
  }
  const scope = stringsOf(data.scopeConstraints);
  if (scope.length > 0) sections.push(`## Scope\n\nStay within these limits:\n\n${scope.map((line) => `- ${oneLine(line)}`).join('\n')}`);
  const schemas = [schemaSummary('Input', data.inputSchema), schemaSummary('Output', data.outputSchema)].filter((text) => text !== '');
  if (schemas.length > 0) sections.push(`## Input and output\n\n${schemas.join('\n\n')}`);
  return sections.join('\n\n');
}

/**
 * The top-level properties of a schema in the order they are written: the order the served
 * protocol lists them in (the gate compares it, since canonical JSON would not see a reorder).
 */
export function schemaPropertyOrder(schema: unknown): string[] {
  return isObject(schema) && isObject(schema.properties) ? Object.keys(schema.properties) : [];
}

/** One line per top-level property (in {@link schemaPropertyOrder}): name, type, whether required, description. */
function schemaSummary(label: string, schema: unknown): string {
  if (!isObject(schema)) return '';
  const properties = isObject(schema.properties) ? Object.entries(schema.properties) : [];
  const required = new Set(stringsOf(schema.required));
  if (properties.length === 0) return `${label}: ${typeOf(schema)}.`;
  const lines = properties.map(([name, property]) => {
    const description = isObject(property) && typeof property.description === 'string' ? `: ${oneLine(property.description)}` : '';
    return `- \`${name}\` (${typeOf(property)}${required.has(name) ? ', required' : ''})${description}`;
  });
  return `${label} (${typeOf(schema)}):\n\n${lines.join('\n')}`;
}

function typeOf(schema: unknown): string {
  if (!isObject(schema)) return 'any';
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((value) => `\`${JSON.stringify(value)}\``).join(', ')}`;
  const type =
    typeof schema.type === 'string' ? schema.type : Array.isArray(schema.type) ? schema.type.filter((t) => typeof t === 'string').join(' or ') : 'any';
  return type === 'array' ? `array of ${typeOf(schema.items)}` : type;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function recordsOf(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string' && item.trim() !== '') : [];
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return oneLine(text).replaceAll('|', '\\|');
}
