// user-uses: a user capability draws only on what it declares: every `capability:` link targets an
// id listed in `uses`, and every `uses` entry is a capability the author can see. Unknown and
// not-visible ids get the same message, so saving reveals nothing about capabilities one cannot see.
import { capabilityTarget } from '../../contract.js';
import { ruleDocsUrl, type Rule } from '../../rule.js';
import { rangeForPath } from '../../yaml-source.js';

export const userUses: Rule = {
  meta: {
    id: 'user-uses',
    description: 'Links of a user capability target ids listed in `uses`, and `uses` lists visible capabilities.',
    defaultLevel: 'error',
    reads: 'catalog',
    docs: { url: ruleDocsUrl('user-uses') },
    defaultOptions: {},
    messages: {
      notDeclared: 'the workflow links to "{{id}}", which is not listed in `uses`; add it to `uses` or remove the link',
      unknown: '`uses` lists "{{id}}", which is not a capability you can use',
    },
  },
  check({ registry, report }) {
    for (const capability of registry.capabilities) {
      const { document } = capability;
      const uses = document.frontmatter.data?.uses;
      if (!Array.isArray(uses)) continue;
      const declared = new Set(uses.filter((id): id is string => typeof id === 'string'));
      uses.forEach((id, index) => {
        if (typeof id === 'string' && !registry.byId.has(id)) {
          report({
            capability,
            range: rangeForPath(document.frontmatter.ranges, `/uses/${index}`, document.frontmatter.range),
            messageId: 'unknown',
            data: { id },
          });
        }
      });
      for (const link of document.links) {
        const target = capabilityTarget(link.url);
        if (target !== undefined && !declared.has(target)) report({ capability, range: link.range, messageId: 'notDeclared', data: { id: target } });
      }
    }
  },
};
