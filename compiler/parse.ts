// Parse: one PROTOCOL.md (text) -> CapabilityDocument. The parsing itself is in parse-markdown.ts;
// this module adds the body's BPE token count, and so imports the tokenizer, which parse workers
// do not load while they parse (they import parse-markdown.ts and send uncounted documents; the
// main thread counts, with one worker's help for a large registry: cli/parse-workers.ts).
import { parseUncounted, type UncountedDocument } from './parse-markdown.js';
import { countTokens } from './tokens.js';
import type { CapabilityDocument } from './types.js';

export * from './parse-markdown.js';

export function parseCapability(file: string, content: string): CapabilityDocument {
  return countBodyTokens(parseUncounted(file, content));
}

/** The document with `bodyTokens`, the BPE token count of its body. */
export function countBodyTokens(document: UncountedDocument): CapabilityDocument {
  return withBodyTokens(document, countTokens(document.body));
}

/** The document with its body's token count, counted elsewhere (a parse worker: cli/parse-workers.ts). */
export function withBodyTokens(document: UncountedDocument, bodyTokens: number): CapabilityDocument {
  return { ...document, bodyTokens };
}
