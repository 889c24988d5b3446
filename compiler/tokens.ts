// Token counts with a real BPE tokenizer (gpt-tokenizer, o200k_base). Text that looks like a special
// token (`<|endoftext|>`) is counted as the plain text it is: authors may write anything, and the
// tokenizer would otherwise throw.
import { countTokens as countBpeTokens } from 'gpt-tokenizer';

const SPECIAL_TOKENS_AS_TEXT = { disallowedSpecial: new Set<string>() };

export function countTokens(text: string): number {
  return countBpeTokens(text, SPECIAL_TOKENS_AS_TEXT);
}
