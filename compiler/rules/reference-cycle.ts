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
import { byCodeUnits } from '../order.js';

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
    // The graph with capabilities as numbers (in byId order) and edges in arrays: at 10,000
    // capabilities a search over maps of strings costs far more than the rest of the rule.
    const ids: string[] = [];
    const capabilities: LintCapability[] = [];
    for (const [id, capability] of registry.byId) {
      ids.push(id);
      capabilities.push(capability);
    }
    // Kept under --watch while the ids are the same.
    const numberOf = registry.derived.across('reference-cycle:numbers', ids, () => new Map(ids.map((id, node) => [id, node])));
    /** Node i's edges are targets[starts[i]] … targets[starts[i + 1] - 1], in target id order, each with its first link. */
    const starts = new Int32Array(ids.length + 1);
    const targets: number[] = [];
    const links: LinkRef[] = [];
    capabilities.forEach((capability, node) => {
      starts[node] = targets.length;
      for (const [target, link] of linkedCapabilities(registry.derived, capability)) {
        const other = numberOf.get(target);
        if (other === undefined) continue;
        targets.push(other);
        links.push(link);
      }
    });
    starts[ids.length] = targets.length;
    const edges = Int32Array.from(targets);
    const successors = (id: string): string[] => {
      const node = numberOf.get(id) as number;
      return Array.from(edges.subarray(starts[node], starts[node + 1]), (other) => ids[other] as string);
    };
    const linkFrom = (from: string, to: string): LinkRef => {
      const node = numberOf.get(from) as number;
      const other = numberOf.get(to) as number;
      for (let edge = starts[node] as number; edge < (starts[node + 1] as number); edge += 1) if (edges[edge] === other) return links[edge] as LinkRef;
      throw new Error(`reference-cycle: no link ${from} -> ${to}`);
    };

    for (const numbers of componentsOf(ids.length, starts, edges, 2)) {
      const component = numbers.map((node) => ids[node] as string);
      const members = new Set(component);
      const first = [...component].sort()[0] as string;
      const cycle = shortestCycle(first, members, successors);
      const next = cycle[1] as string;
      const closer = cycle[cycle.length - 2] as string;
      const link = linkFrom(first, next);
      const closingLink = linkFrom(closer, first);
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
    return [...out].sort(([a], [b]) => byCodeUnits(a, b));
  });
}

/** Tarjan's algorithm, iterative (a long chain of references must not overflow the stack). */
export function stronglyConnected(nodes: readonly string[], successors: (node: string) => string[]): string[][] {
  const numberOf = new Map(nodes.map((node, index) => [node, index]));
  const names = [...nodes];
  const starts: number[] = [];
  const targets: number[] = [];
  for (let node = 0; node < names.length; node += 1) {
    starts.push(targets.length);
    for (const successor of successors(names[node] as string)) {
      let other = numberOf.get(successor);
      if (other === undefined) {
        other = names.length;
        numberOf.set(successor, other);
        names.push(successor);
      }
      targets.push(other);
    }
  }
  starts.push(targets.length);
  return componentsOf(names.length, Int32Array.from(starts), Int32Array.from(targets)).map((component) => component.map((node) => names[node] as string));
}

/**
 * The strongly connected components of the graph of nodes 0 … count - 1 where node i's successors
 * are targets[starts[i]] … targets[starts[i + 1] - 1], those of `smallest` nodes or more; Tarjan's
 * algorithm over typed arrays, iterative.
 */
function componentsOf(count: number, starts: Int32Array, targets: Int32Array, smallest = 1): number[][] {
  const index = new Int32Array(count).fill(-1);
  const low = new Int32Array(count);
  const onStack = new Uint8Array(count);
  const stack = new Int32Array(count);
  let stackSize = 0;
  // The depth-first path: each node with the position of its next edge.
  const pathNode = new Int32Array(count);
  const pathEdge = new Int32Array(count);
  let depth = 0;
  let counter = 0;
  const components: number[][] = [];
  const enter = (node: number): void => {
    index[node] = counter;
    low[node] = counter;
    counter += 1;
    stack[stackSize] = node;
    stackSize += 1;
    onStack[node] = 1;
    pathNode[depth] = node;
    pathEdge[depth] = starts[node] as number;
    depth += 1;
  };
  for (let root = 0; root < count; root += 1) {
    if (index[root] !== -1) continue;
    enter(root);
    while (depth > 0) {
      const node = pathNode[depth - 1] as number;
      const edge = pathEdge[depth - 1] as number;
      if (edge < (starts[node + 1] as number)) {
        pathEdge[depth - 1] = edge + 1;
        const successor = targets[edge] as number;
        if (index[successor] === -1) enter(successor);
        else if (onStack[successor] === 1) low[node] = Math.min(low[node] as number, index[successor] as number);
        continue;
      }
      depth -= 1;
      if (depth > 0) {
        const parent = pathNode[depth - 1] as number;
        low[parent] = Math.min(low[parent] as number, low[node] as number);
      }
      if (low[node] === index[node]) {
        // The component is the stack down to `node`, listed from the top.
        let bottom = stackSize - 1;
        while (stack[bottom] !== node) bottom -= 1;
        for (let at = bottom; at < stackSize; at += 1) onStack[stack[at] as number] = 0;
        if (stackSize - bottom >= smallest) components.push(Array.from(stack.subarray(bottom, stackSize)).reverse());
        stackSize = bottom;
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
