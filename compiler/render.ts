// The protocol as served to agents: a short frontmatter with only the version fields, then the body
// with every `capability:` link turned into an instruction to load that capability through the catalog.
import type { CapabilityDocument, LinkRef } from './types.js';

export const CAPABILITY_SCHEME = 'capability:';
/** The tool name that rendered instructions mention; a server with a tool prefix rewrites it. */
export const PROTOCOL_TOOL = 'get_capability_protocol';

/** The capability id a link points at, or undefined when it is not a `capability:` link. */
export function capabilityTarget(url: string): string | undefined {
  return url.startsWith(CAPABILITY_SCHEME) ? url.slice(CAPABILITY_SCHEME.length) : undefined;
}

export function catalogInstruction(text: string, id: string, protocolTool = PROTOCOL_TOOL): string {
  const label = text.trim() === '' || text.trim() === id ? `\`${id}\`` : `${text.trim()} (\`${id}\`)`;
  return `${label} (a separate capability: call \`${protocolTool}\` with \`{"capabilityId": "${id}"}\` to load its protocol from the catalog)`;
}

/** Offsets of a range inside the body (ranges are file positions). */
function bodyOffsets(document: CapabilityDocument, bodyIndex: number[], link: LinkRef): [number, number] {
  const toOffset = (line: number, column: number): number => (bodyIndex[line - document.bodyStartLine] ?? 0) + column - 1;
  return [toOffset(link.range.line, link.range.column), toOffset(link.range.endLine, link.range.endColumn)];
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i += 1) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

export function renderBody(document: CapabilityDocument, protocolTool = PROTOCOL_TOOL): string {
  const starts = lineStarts(document.body);
  const replacements = document.links
    .filter((link) => link.kind === 'link' && capabilityTarget(link.url) !== undefined)
    .map((link) => ({ link, offsets: bodyOffsets(document, starts, link) }))
    .sort((a, b) => b.offsets[0] - a.offsets[0]);
  let body = document.body;
  for (const { link, offsets } of replacements) {
    body = body.slice(0, offsets[0]) + catalogInstruction(link.text, capabilityTarget(link.url) ?? '', protocolTool) + body.slice(offsets[1]);
  }
  return body;
}

export function renderProtocol(document: CapabilityDocument, version: string, updated: string, protocolTool = PROTOCOL_TOOL): string {
  const body = renderBody(document, protocolTool).replace(/^\n+/, '');
  return `---\nprotocol_version: ${version}\nprotocol_updated: ${updated}\n---\n\n${body.endsWith('\n') ? body : `${body}\n`}`;
}

