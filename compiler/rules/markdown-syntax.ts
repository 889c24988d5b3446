// markdown-syntax: Markdown that parses, but not as the author meant: today an unclosed code fence,
// which silently turns the rest of the protocol into a code block.
import { ruleDocsUrl, type Rule } from '../rule.js';

export const markdownSyntax: Rule = {
  meta: {
    id: 'markdown-syntax',
    description: 'The protocol body has no unclosed code fence.',
    defaultLevel: 'error',
    reads: 'document',
    docs: { url: ruleDocsUrl('markdown-syntax') },
    defaultOptions: {},
    messages: { problem: '{{message}}' },
  },
  check({ registry, report }) {
    for (const capability of registry.capabilities) {
      for (const problem of capability.document.bodyProblems) {
        report({ capability, range: problem.range, messageId: 'problem', data: { message: problem.message } });
      }
    }
  },
};
