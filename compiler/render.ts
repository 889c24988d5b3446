// The protocol as served to agents: a short frontmatter with only the version fields, then the body
// with every `capability:` link turned into an instruction to load that capability through the catalog.
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
  return `---\nprotocol_version: ${version}\nprotocol_updated: ${updated}\n---\n\n${body.endsWith('\n') ? body : `${body}\n`}`;
}

