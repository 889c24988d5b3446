// reference-cycle: the graph of `capability:` links is acyclic. An agent that follows "load X and
// follow it" from A to B and back to A never finishes, and a cycle means neither protocol owns the
// procedure. References should run one way: the specific capability links to the general one.
//
// Each strongly connected component of the graph is reported once, at the first link (in file order)
// of its lexicographically first capability that starts the shortest cycle through it; the message
// spells the cycle out (`a -> b -> c -> a`) and names the other capabilities tangled in the same
// component. A link from a capability to itself is left to `catalog-references` (never reported
// twice); links to unknown ids are that rule's business too.
import { ruleDocsUrl, type LintCapability, type Rule } from '../rule.js';
import { capabilityTarget } from '../contract.js';
import type { Derived } from '../derived.js';
import type { LinkRef } from '../types.js';

export const referenceCycle: Rule = {
  meta: {
    id: 'reference-cycle',
    description: 'The graph of `capability:` links between protocols has no cycle.',
    defaultLevel: 'error',
    reads: 'git',
    docs: { url: ruleDocsUrl('reference-cycle') },
    defaultOptions: {},
    messages: {
      cycle:
        'capability references form a cycle: {{cycle}}; references must run one way (the specific capability links to the general one): remove one of these links',
      cycleWithOthers:
        'capability references form a cycle: {{cycle}} (also tangled with: {{others}}); references must run one way (the specific capability links to the general one): remove links until no capability leads back to itself',
    },
  },
  check({ registry, report }) {
    /** id -> target id -> first link to it (file order), in target order; only ids that link to another known one. */
    const edges = new Map<string, Map<string, LinkRef>>();
    for (const [id, capability] of registry.byId) {
      let out: Map<string, LinkRef> | undefined;
      for (const [target, link] of linkedCapabilities(registry.derived, capability)) {
        if (registry.byId.has(target)) (out ??= new Map()).set(target, link);
      }
      if (out !== undefined) edges.set(id, out);
    }
    // A capability that links to no other is a component of its own, never part of a cycle; the
    // rest in id order, so that the search is deterministic (what is reported does not depend on
    // the order: each component's first id, shortest cycle and others are sorted).
    const nodes = [...edges.keys()].sort();

    for (const component of stronglyConnected(nodes, (id) => [...(edges.get(id)?.keys() ?? [])])) {
      if (component.length < 2) continue;
      const members = new Set(component);
      const first = [...component].sort()[0] as string;
      const cycle = shortestCycle(first, members, (id) => [...(edges.get(id)?.keys() ?? [])]);
      const next = cycle[1] as string;
      const closer = cycle[cycle.length - 2] as string;
      const link = edges.get(first)?.get(next) as LinkRef;
      const closingLink = edges.get(closer)?.get(first) as LinkRef;
      const onCycle = new Set(cycle);
      const others = [...component].filter((id) => !onCycle.has(id)).sort();
      const closerCapability = registry.byId.get(closer) as LintCapability;
      report({
        capability: registry.byId.get(first),
        range: link.range,
        messageId: others.length > 0 ? 'cycleWithOthers' : 'cycle',
        data: { cycle: cycle.join(' -> '), others: others.join(', ') },
        related: { file: closerCapability.document.file, range: closingLink.range, message: `the cycle closes here (${closer} -> ${first})` },
      });
    }
  },
};

/**
 * The ids a capability links to with `capability:` links, other than its own, each with its first
 * link (file order), in id order: a fact of its document (the id is the document's too).
 */
function linkedCapabilities(derived: Derived, { document, id }: LintCapability): readonly (readonly [string, LinkRef])[] {
  return derived.of(document, 'reference-cycle:links', undefined, () => {
    const out = new Map<string, LinkRef>();
    for (const link of document.links) {
      const target = capabilityTarget(link.url);
      if (target === undefined || target === id || out.has(target)) continue;
      out.set(target, link);
    }
    return [...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  });
}

/** Tarjan's algorithm, iterative (a long chain of references must not overflow the stack). */
export function stronglyConnected(nodes: readonly string[], successors: (node: string) => string[]): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;

  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: { node: string; next: string[]; position: number }[] = [];
    const enter = (node: string): void => {
      index.set(node, counter);
      low.set(node, counter);
      counter += 1;
      stack.push(node);
      onStack.add(node);
      work.push({ node, next: successors(node), position: 0 });
    };
    enter(root);
    while (work.length > 0) {
      const frame = work[work.length - 1] as (typeof work)[number];
      if (frame.position < frame.next.length) {
        const successor = frame.next[frame.position] as string;
        frame.position += 1;
        if (!index.has(successor)) enter(successor);
        else if (onStack.has(successor)) low.set(frame.node, Math.min(low.get(frame.node) ?? 0, index.get(successor) ?? 0));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) ?? 0, low.get(frame.node) ?? 0));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        for (;;) {
          const member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
          if (member === frame.node) break;
        }
        components.push(component);
      }
    }
  }
  return components;
}

/** The shortest path start -> … -> start inside `members` (breadth-first, successors in id order). */
function shortestCycle(start: string, members: ReadonlySet<string>, successors: (node: string) => string[]): string[] {
  const parent = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head += 1) {
    const node = queue[head] as string;
    for (const successor of successors(node)) {
      if (!members.has(successor)) continue;
      if (successor === start) {
        const path = [start];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = parent.get(at)) path.push(at);
        path.push(start);
        // path is start, node, …, (child of start), start reversed in the middle
        return [start, ...path.slice(1, -1).reverse(), start];
      }
      if (successor !== start && !parent.has(successor)) {
        parent.set(successor, node);
        queue.push(successor);
      }
    }
  }
  return [start, start]; // unreachable for a component of two or more
}
