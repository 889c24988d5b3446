#!/usr/bin/env node
// Generate a synthetic but realistic capreg registry for benchmarks and load tests.
//
//   node bench/generate-registry.mjs DIR|--out DIR [--count 1000] [--toolsets N] [--tools 10] [--seed 1] [--no-evals]
//
// or, from code:
//
//   import { generateRegistry } from './bench/generate-registry.mjs';
//   const summary = await generateRegistry(dir, { count: 1000 });
//
// What it writes under DIR:
// - capreg.config.yaml: raises the `token-budget` catalog budget to 200 tokens per capability.
// - capabilities/toolsets/group-NNN.yaml (the split layout, TOOLSETS_PER_FILE toolsets per file, so
//   that no file grows with the registry): `toolsets` toolsets (default count / 30, at least 50, so
//   each is shared by ~30 capabilities or more) of `tools` tools each; a few tools per toolset are
//   asynchronous and declare `states`.
// - capabilities/<id>/PROTOCOL.md for `count` capabilities, about 4 KB each: complete, valid
//   frontmatter (unique `whenToUse` triggers, `requiredToolsets` that exist, `states` = every state
//   of the tools it lists), then a body with headings, a `## Tools` table listing every tool of its
//   required toolsets, numbered steps, a `## States` section (`- **STATE** — what to do`), negative
//   rules ("Do not…", "Never…"), and a few `capability:` links, always to capabilities with a LOWER
//   index, so the reference graph is acyclic. Paragraphs are varied with the index (no paragraph
//   is copied between capabilities), bodies stay well under 2,000 tokens, and the body names only
//   tools of the capability's own toolsets and no other capability id outside a `capability:` link.
// - capabilities/<id>/evals.yaml (unless `evals: false` / --no-evals): routing evals built from the
//   capability's own triggers, three `shouldMatch` requests (one trigger as written, two
//   paraphrases of others) and one `shouldNotMatch` request (a trigger of the next capability), so
//   `capreg eval` runs on a generated registry and `capreg check` has requests to compare.
//
// Output is deterministic for a given (count, toolsets, tools, seed).
// bench/build.mjs picks the capability it edits from the `ids` this returns, so both agree on the
// toolsets without repeating the default there.
import { execFileSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// ---------------------------------------------------------------------------------------------
// Vocabulary

const DOMAINS = [
  'billing',
  'inventory',
  'payroll',
  'tickets',
  'calendar',
  'contacts',
  'invoices',
  'shipments',
  'expenses',
  'assets',
  'contracts',
  'leads',
  'campaigns',
  'surveys',
  'recipes',
  'fleet',
  'rooms',
  'courses',
  'grants',
  'patents',
  'vendors',
  'audits',
  'budgets',
  'claims',
  'donations',
  'events',
  'feedback',
  'forms',
  'hiring',
  'incidents',
  'leases',
  'licenses',
  'meetings',
  'newsletters',
  'orders',
  'parcels',
  'permits',
  'policies',
  'projects',
  'quotes',
  'refunds',
  'rentals',
  'returns',
  'reviews',
  'schedules',
  'subscriptions',
  'tasks',
  'timesheets',
  'trainings',
  'warranties',
  'backups',
  'builds',
  'datasets',
  'deployments',
  'domains',
  'emails',
  'feeds',
  'glossaries',
  'images',
  'journals',
];

const TOOL_VERBS = [
  { verb: 'list', action: 'read', text: 'List {noun} in a date range, filtered by owner or label, newest first, paginated.' },
  { verb: 'get', action: 'read', text: 'Fetch one {one} by id with its history and attachments.' },
  { verb: 'create', action: 'write', text: 'Create one {one} from the fields given; returns the stored record with its id.' },
  { verb: 'update', action: 'write', text: 'Change fields of one {one}; returns the old and the new values.' },
  { verb: 'delete', action: 'write', text: 'Delete one {one} by id; the deletion cannot be undone.' },
  { verb: 'search', action: 'read', text: 'Semantic search over {noun}; returns matches with ids, dates and excerpts.' },
  { verb: 'export', action: 'read', text: 'Export {noun} of a period as CSV or Markdown. Asynchronous: returns a job id and status.', async: 0 },
  { verb: 'sync', action: 'write', text: 'Synchronise {noun} with the upstream system. Asynchronous: returns a run id and status.', async: 1 },
  { verb: 'settings', action: 'admin', text: 'Read or change the settings of the {one} service (time zone, defaults, retention).' },
  { verb: 'summarize', action: 'read', text: 'Summarise {noun} of a period for chat; nothing is stored.', async: 2 },
  { verb: 'archive', action: 'write', text: 'Archive {noun} older than a date; archived records stay searchable.' },
  { verb: 'import', action: 'write', text: 'Import {noun} from an uploaded file. Asynchronous: returns a batch id and status.', async: 1 },
];

const STATE_SETS = [
  ['QUEUED', 'RUNNING', 'COMPLETED', 'FAILED'],
  ['PENDING', 'SYNCING', 'DONE', 'FAILED', 'CANCELLED'],
  ['DRAFTING', 'READY', 'EXPIRED'],
];

const STATE_ADVICE = {
  QUEUED: ['wait for the job to start and poll again after the delay it returns', 'tell the user the job is queued and keep polling'],
  RUNNING: ['keep polling; report progress only when the user asks', 'poll again after `retryAfterSeconds` and keep the user informed'],
  COMPLETED: ['show the result exactly as returned, with the period it covers', 'present the outcome and offer the download link if there is one'],
  FAILED: [
    'read `error.code`; retry once for a timeout, otherwise explain the error to the user',
    'give the user the job id and the error message and ask how to proceed',
  ],
  PENDING: ['the run is accepted but not started; poll again later', 'wait and poll; starting a second run now creates a duplicate'],
  SYNCING: ['records are being transferred; do not edit them until the run finishes', 'keep polling and warn the user that results are incomplete'],
  DONE: ['report how many records changed, as returned', 'summarise the changes the run reports, nothing more'],
  CANCELLED: ['say who cancelled the run if the response says so, and offer to start again', 'confirm with the user before starting a new run'],
  DRAFTING: ['a draft is being written; do not present it as final', 'wait for the draft to become ready before showing it'],
  READY: ['show the summary and say it is not stored', 'present it, labelled with its period'],
  EXPIRED: ['the summary is out of date; offer to produce a new one', 'do not show it as current; generate a fresh one if the user agrees'],
};

const ADJECTIVES = [
  'quarterly',
  'regional',
  'overdue',
  'recurring',
  'urgent',
  'archived',
  'shared',
  'private',
  'monthly',
  'weekly',
  'pending',
  'external',
  'internal',
  'seasonal',
  'flagged',
  'disputed',
  'verified',
  'draft',
  'bulk',
  'single',
  'annual',
  'daily',
  'partner',
  'customer',
  'team',
  'personal',
  'legacy',
  'priority',
  'scheduled',
  'manual',
  'automated',
  'delegated',
  'escalated',
  'sampled',
  'consolidated',
  'expired',
  'renewed',
  'imported',
  'exported',
  'reviewed',
];

const VERBS_HUMAN = [
  'review',
  'reconcile',
  'triage',
  'prepare',
  'clean up',
  'summarise',
  'audit',
  'follow up on',
  'plan',
  'approve',
  'track',
  'compare',
  'forecast',
  'consolidate',
  'verify',
  'close out',
  'hand over',
  'prioritise',
  'report on',
  'tidy',
];

const FILLER = [
  'the user',
  'the owner of the record',
  'the requester',
  'the account holder',
  'the team lead',
  'the reviewer',
  'the person who asked',
  'the assignee',
  'the approver',
  'the customer contact',
];

const REASONS = [
  'because the upstream system is the source of truth',
  'since partial results mislead people who read them later',
  'because the user is accountable for what is stored under their name',
  'as a wrong record is harder to fix than a missing one',
  'since the audit trail must match what the user actually said',
  'because other capabilities read the same records',
  'so that figures can be traced back to their source',
  'because changes are visible to everyone who shares the workspace',
];

// Qualifies the subject of a toolset that reuses a domain noun (the 61st toolset and later), so that
// no two capabilities share a subject: shared subjects make copied list items and colliding triggers.
const QUALIFIERS = ['northern', 'southern', 'eastern', 'western', 'central', 'coastal', 'metro', 'rural', 'offshore', 'overseas'];

const NUMBER_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

// ---------------------------------------------------------------------------------------------
// Helpers

/** mulberry32: small deterministic PRNG. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = (random, list) => list[Math.floor(random() * list.length)];
const pad = (n, width = 4) => String(n).padStart(width, '0');
/** A number spelled digit by digit ("4-2" -> "four two"): a unique, pronounceable tag per index. */
const spelled = (n) => [...String(n)].map((d) => NUMBER_WORDS[Number(d)]).join(' ');
const singular = (noun) => (noun.endsWith('ies') ? `${noun.slice(0, -3)}y` : noun.endsWith('ses') ? noun.slice(0, -2) : noun.replace(/s$/, ''));
const capitalize = (text) => text.charAt(0).toUpperCase() + text.slice(1);

function quoteYaml(text) {
  return JSON.stringify(text);
}

// ---------------------------------------------------------------------------------------------
// Toolsets

/** Toolsets for a registry of `capabilities` capabilities: a few hundred at 10,000, shared by ~30 each. */
export const defaultToolsetCount = (capabilities) => Math.max(50, Math.floor(capabilities / 30));

/** Toolsets per file of capabilities/toolsets/: several, so the folder stays far below its 1,000 files. */
export const TOOLSETS_PER_FILE = 8;

/** The toolset registry: `count` toolsets of `toolsPerToolset` tools each. */
export function makeToolsets({ toolsets: count = 50, tools: toolsPerToolset = 10 } = {}) {
  const list = [];
  for (let t = 0; t < count; t += 1) {
    const noun = DOMAINS[t % DOMAINS.length];
    const round = Math.floor(t / DOMAINS.length);
    const id = round === 0 ? noun : `${noun}-${round + 1}`;
    const prefix = id.replace(/-/g, '_');
    const tools = [];
    // Which asynchronous verbs this toolset has: none for every fifth toolset, else one or two.
    const asyncKinds = t % 5 === 0 ? [] : t % 2 === 0 ? [0, 1] : [t % 3];
    for (let k = 0; k < toolsPerToolset; k += 1) {
      const base = TOOL_VERBS[k % TOOL_VERBS.length];
      const name = `${prefix}_${base.verb}${k >= TOOL_VERBS.length ? `_${Math.floor(k / TOOL_VERBS.length) + 1}` : ''}`;
      const tool = { name, action: base.action, description: base.text.replaceAll('{noun}', noun).replaceAll('{one}', singular(noun)) };
      if (base.async !== undefined && asyncKinds.includes(base.async)) tool.states = STATE_SETS[base.async];
      tools.push(tool);
    }
    const qualifier = round === 0 ? '' : `${QUALIFIERS[(round - 1) % QUALIFIERS.length]} `;
    list.push({
      id,
      noun,
      qualifier,
      prefix,
      description: `The ${noun} service: records, search, exports and settings (toolset ${t + 1} of ${count}).`,
      tools,
    });
  }
  return list;
}

/** The split layout: [file name under capabilities/toolsets/, YAML text] in path order. */
export function toolsetFiles(toolsets) {
  const files = [];
  for (let start = 0; start < toolsets.length; start += TOOLSETS_PER_FILE) {
    files.push([`group-${pad(start / TOOLSETS_PER_FILE + 1, 3)}.yaml`, toolsetsYaml(toolsets.slice(start, start + TOOLSETS_PER_FILE))]);
  }
  return files;
}

export function toolsetsYaml(toolsets) {
  const lines = ['# Generated by bench/generate-registry.mjs', ''];
  for (const toolset of toolsets) {
    lines.push(`${toolset.id}:`, `  description: ${quoteYaml(toolset.description)}`, '  tools:');
    for (const tool of toolset.tools) {
      lines.push(`    ${tool.name}:`, `      action: ${tool.action}`, `      description: ${quoteYaml(tool.description)}`);
      if (tool.states) lines.push(`      states: [${tool.states.join(', ')}]`);
    }
  }
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// Capabilities

/** Identity of capability `index`: id (unique, with a number no prose contains), name, subject. */
export function capabilityIdentity(index, toolsets) {
  const primary = toolsets[index % toolsets.length];
  const adjective = ADJECTIVES[Math.floor(index / toolsets.length) % ADJECTIVES.length];
  const id = `${adjective}-${primary.id}-${pad(index)}`;
  const subject = `${adjective} ${primary.qualifier}${primary.noun}`;
  return { id, subject, name: `${capitalize(subject)} desk ${index}`, primary };
}

/** The toolsets capability `index` requires: its primary toolset, and a second one for every fourth capability. */
function requiredToolsetsOf(index, toolsets) {
  const primary = toolsets[index % toolsets.length];
  if (index % 4 !== 2 || toolsets.length < 2) return [primary];
  let second = toolsets[(index * 7 + 3) % toolsets.length];
  if (second === primary) second = toolsets[(index + 1) % toolsets.length];
  return [primary, second];
}

/** The text of capabilities/<id>/PROTOCOL.md for capability `index`. */
export function capabilityMarkdown(index, toolsets, { seed = 1 } = {}) {
  return capability(index, toolsets, { seed }).markdown;
}

/** PROTOCOL.md of capability `index`, with the parts its evals are built from. */
function capability(index, toolsets, { seed }) {
  const random = rng(seed * 1_000_003 + index * 7919);
  const me = capabilityIdentity(index, toolsets);
  const required = requiredToolsetsOf(index, toolsets);
  const tools = required.flatMap((toolset) => toolset.tools.map((tool) => ({ ...tool, toolset })));
  const states = [...new Set(tools.flatMap((tool) => tool.states ?? []))];
  const tag = spelled(index);
  const verb = () => pick(random, VERBS_HUMAN);
  const who = () => pick(random, FILLER);
  const why = () => pick(random, REASONS);
  const tool = (filter) => {
    const candidates = filter ? tools.filter(filter) : tools;
    return (candidates.length > 0 ? pick(random, candidates) : pick(random, tools)).name;
  };
  const noun = me.primary.noun;
  const one = singular(noun);

  // Links: up to three capabilities with a LOWER index (acyclic by construction).
  const links = [];
  if (index > 0) {
    const wanted = index % 4 === 0 ? 0 : 1 + (index % 3);
    const seen = new Set();
    for (let k = 0; k < wanted * 3 && links.length < wanted; k += 1) {
      const target = Math.floor(random() * index);
      if (seen.has(target)) continue;
      seen.add(target);
      links.push(capabilityIdentity(target, toolsets));
    }
  }

  const fm = [
    '---',
    `id: ${me.id}`,
    `name: ${quoteYaml(me.name)}`,
    `description: >-`,
    `  Helps ${who()} ${verb()} ${me.subject} (desk ${index}) with the ${required.map((t) => t.id).join(' and ')}`,
    `  toolset${required.length > 1 ? 's' : ''}: finding records, changing them with confirmation, and running exports.`,
    'whenToUse:',
  ];
  // Drawn in this order so that the random sequence, and so every generated byte, stays as it was.
  const triggers = [
    `${verb()} my ${me.subject} on desk ${index}`,
    `${me.subject} desk ${index} ${pick(random, ['status', 'overview', 'clean-up', 'report', 'question'])}`,
    `what changed in ${me.subject} ${tag}`,
    `${pick(random, ['fix', 'update', 'correct', 'remove'])} a ${one} on ${me.subject} desk ${index}`,
  ];
  fm.push(
    ...triggers.map((trigger) => `  - ${trigger}`),
    `requiredToolsets: [${required.map((t) => t.id).join(', ')}]`,
    `protocol_version: ${1 + (index % 3)}.${index % 7}.${index % 5}`,
    `protocol_updated: 2026-${pad(1 + (index % 12), 2)}-${pad(1 + (index % 28), 2)}`,
  );
  if (states.length > 0) fm.push(`states: [${states.join(', ')}]`);
  fm.push(`tags: [${noun}, ${ADJECTIVES[index % ADJECTIVES.length]}, generated]`);
  if (index % 10 === 0) fm.push(`retiredTools: ["${me.primary.prefix}_legacy_*"]`);
  fm.push('---', '');

  const body = [];
  body.push(`# ${me.name}`, '');
  body.push(
    `You help ${who()} ${verb()} ${me.subject} on desk ${index} (tag ${tag}). The ${noun} service is the only source`,
    `of truth: every answer about a ${one} comes from a tool result, ${why()}. Keep replies short and`,
    `state the period and the number of records you looked at in ${me.subject} ${tag}.`,
    '',
  );

  body.push('## Tools', '', '| Tool | Action | Use it to |', '| --- | --- | --- |');
  for (const t of tools)
    body.push(
      `| \`${t.name}\` | ${t.action} | ${t.description
        .split(/[.;:(]/)[0]
        .trim()
        .toLowerCase()} |`,
    );
  body.push('');
  body.push(
    `Call \`${tool((t) => t.name.endsWith('_settings'))}\` once per conversation before you resolve a date for desk ${index}:`,
    `"today" and "last week" are computed in the time zone of ${who()}, not yours.`,
    '',
  );

  body.push(`## Finding ${noun}`, '');
  const steps = 3 + Math.floor(random() * 2);
  for (let s = 1; s <= steps; s += 1) {
    const lines = [
      `Ask ${who()} which ${one} they mean when more than one matches on desk ${index}; use \`${tool((t) => t.action === 'read')}\` to list candidates.`,
      `Resolve relative dates to exact dates for ${me.subject} ${tag} and say them back (step ${s}).`,
      `Prefer \`${tool((t) => t.name.endsWith('_search'))}\` for questions by meaning and \`${tool((t) => t.name.endsWith('_list'))}\` for date ranges in step ${s} of desk ${index}.`,
      `Quote the ids of the records you use, so ${who()} can check them later (${tag}, step ${s}).`,
      `Stop after ${2 + s} pages of results on desk ${index} and ask whether to continue ${why()}.`,
      `Group results by ${pick(random, ['owner', 'week', 'label', 'status', 'project'])} when there are more than ${5 + s * 3} of them on desk ${index}.`,
    ];
    body.push(`${s}. ${lines[(s + index) % lines.length]}`);
  }
  body.push('');

  body.push(`## Changing and deleting ${noun}`, '');
  body.push(
    `1. Show the ${one} with its id and the exact change (old value, new value) for desk ${index}.`,
    `2. Wait for an explicit yes from ${who()} on desk ${index}; then call \`${tool((t) => t.action === 'write')}\`.`,
    `3. Report what the tool returned for ${me.subject} ${tag}, one line per record.`,
    '',
    `Do not change more than one ${one} per confirmation on desk ${index} unless ${who()} approved the full list`,
    `you showed, ${why()}. Never infer a deletion from a vague remark about ${me.subject} ${tag}.`,
    '',
  );

  if (states.length > 0) {
    body.push('## States', '');
    body.push(`Asynchronous tools on desk ${index} return a status; act on it as follows (${tag}).`, '');
    for (const state of states) {
      const advice = STATE_ADVICE[state] ?? ['act on the status as the tool description says'];
      body.push(`- **${state}** — ${pick(random, advice)} (desk ${index}).`);
    }
    body.push('');
  }

  body.push('## Rules', '');
  body.push(
    `- Never invent ${noun}, figures, dates or people that no tool returned for desk ${index}.`,
    `- Do not retry a failed write on ${me.subject} ${tag} more than once without asking ${who()}.`,
    `- Never show records of desk ${index} to anyone but ${who()} and people they named.`,
    `- Do not paste raw tool output longer than ${10 + (index % 20)} lines; summarise it for ${me.subject}.`,
  );
  if (index % 10 === 0) body.push(`- Never call the retired \`${me.primary.prefix}_legacy_*\` tools on desk ${index}; they no longer exist.`);
  body.push('');

  if (links.length > 0) {
    body.push('## Related capabilities', '');
    for (const link of links) {
      body.push(`- To ${verb()} ${link.subject} too, load [${link.name}](capability:${link.id}) and follow it (from desk ${index}).`);
    }
    body.push('');
  }

  if (index % 3 === 1) {
    body.push('## Example', '');
    body.push(`A request to ${verb()} ${me.subject} on desk ${index} resolves to a call like this:`, '');
    body.push(
      '```json',
      `{"tool": "${tool((t) => t.action === 'read')}", "arguments": {"from": "2026-${pad(1 + (index % 12), 2)}-01", "limit": ${10 + (index % 40)}}}`,
      '```',
      '',
    );
  }

  body.push(`## Notes for desk ${index}`, '');
  const notes = 1;
  for (let n = 0; n < notes; n += 1) {
    body.push(
      `Note ${n + 1} (${tag}): when ${who()} asks to ${verb()} ${me.subject}, check the ${pick(random, ['owner', 'period', 'labels', 'status'])}`,
      `first and mention anything unusual you notice, ${why()}. Keep the answer to ${3 + n + (index % 4)} sentences.`,
      '',
    );
  }

  return { markdown: `${fm.join('\n')}\n${body.join('\n')}`, triggers, subject: me.subject, one, tag };
}

/**
 * The text of capabilities/<id>/evals.yaml for capability `index` of `count`: a trigger as written,
 * two paraphrases (other words around the subject, desk number and spelled tag that make it
 * unique), and as `shouldNotMatch` the next capability's first trigger.
 */
export function capabilityEvals(index, toolsets, { seed = 1, count = 1000 } = {}) {
  const own = capability(index, toolsets, { seed });
  const lines = [
    '# Generated by bench/generate-registry.mjs',
    'shouldMatch:',
    `  - ${quoteYaml(own.triggers[1])}`,
    `  - ${quoteYaml(`could you help me with the ${own.subject} on desk ${index}`)}`,
    // The spelled tag alone is a bag of digit words ("two four two" = "two four four"): the desk number says which.
    `  - ${quoteYaml(`anything new in ${own.subject} ${own.tag} since last time? it is desk ${index}`)}`,
  ];
  if (count > 1) lines.push('shouldNotMatch:', `  - ${quoteYaml(capability((index + 1) % count, toolsets, { seed }).triggers[0])}`);
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// Whole registry

/**
 * Write a registry of `count` capabilities into `dir` (its `capabilities/` folder is replaced).
 * With `evals`, each capability also gets an evals.yaml. Returns {count, toolsets, files, bytes, ids}
 * (`files` and `bytes` count PROTOCOL.md and the toolsets files only; `ids[i]` is capability i's id).
 */
export async function generateRegistry(dir, { count = 1000, toolsets: toolsetCount = defaultToolsetCount(count), tools = 10, seed = 1, evals = true } = {}) {
  const toolsets = makeToolsets({ toolsets: toolsetCount, tools });
  const capabilitiesDir = path.join(dir, 'capabilities');
  await rm(capabilitiesDir, { recursive: true, force: true });
  await mkdir(capabilitiesDir, { recursive: true });
  // A catalog of this size is over the default catalog token budget (8,000 tokens) by design; the
  // registry raises it, as a real registry of this size would, so that it lints clean.
  const config = ['# Generated by bench/generate-registry.mjs', 'rules:', `  token-budget: [warn, {catalog: ${Math.max(8000, count * 200)}}]`, ''].join('\n');
  await writeFile(path.join(dir, 'capreg.config.yaml'), config);
  const toolsetsDir = path.join(capabilitiesDir, 'toolsets');
  await mkdir(toolsetsDir);
  const yamlFiles = toolsetFiles(toolsets);
  await Promise.all(yamlFiles.map(([name, yaml]) => writeFile(path.join(toolsetsDir, name), yaml)));
  let bytes = yamlFiles.reduce((sum, [, yaml]) => sum + Buffer.byteLength(yaml), 0);
  const ids = [];
  const batch = 64;
  for (let start = 0; start < count; start += batch) {
    const writes = [];
    for (let index = start; index < Math.min(count, start + batch); index += 1) {
      const { id } = capabilityIdentity(index, toolsets);
      const text = capabilityMarkdown(index, toolsets, { seed });
      bytes += Buffer.byteLength(text);
      ids.push(id);
      const folder = path.join(capabilitiesDir, id);
      const evalsText = evals ? capabilityEvals(index, toolsets, { seed, count }) : undefined;
      writes.push(
        mkdir(folder).then(() =>
          Promise.all([
            writeFile(path.join(folder, 'PROTOCOL.md'), text),
            evalsText === undefined ? undefined : writeFile(path.join(folder, 'evals.yaml'), evalsText),
          ]),
        ),
      );
    }
    await Promise.all(writes);
  }
  return { count, toolsets: toolsets.length, files: count + yamlFiles.length, bytes, ids };
}

/**
 * Make `dir` a Git repository whose one commit, tagged `base`, holds the registry as it is (outputs
 * and caches ignored): the base a gate benchmark changes a capability against.
 */
export async function commitAsBase(dir) {
  const git = (...args) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  git('init', '-q', '-b', 'main');
  for (const [key, value] of [
    ['user.name', 'Bench'],
    ['user.email', 'bench@example.com'],
    ['commit.gpgsign', 'false'],
  ])
    git('config', key, value);
  await writeFile(path.join(dir, '.gitignore'), '.capreg/\ndist/\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'base registry');
  git('tag', 'base');
}

// ---------------------------------------------------------------------------------------------
// CLI

function parseCli(argv) {
  const options = {};
  let dir;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined || !/^\d+$/.test(next)) throw new Error(`${arg} needs a whole number`);
      return Number(next);
    };
    if (arg === '--out') {
      if (dir !== undefined || argv[i + 1] === undefined) throw new Error('--out needs a folder, given once');
      dir = argv[++i];
    } else if (arg === '--count') options.count = value();
    else if (arg === '--toolsets') options.toolsets = value();
    else if (arg === '--tools') options.tools = value();
    else if (arg === '--seed') options.seed = value();
    else if (arg === '--no-evals') options.evals = false;
    else if (arg === '-h' || arg === '--help') return { help: true };
    else if (arg.startsWith('-')) throw new Error(`unknown option ${arg}`);
    else if (dir === undefined) dir = arg;
    else throw new Error(`unexpected argument ${arg}`);
  }
  return { dir, options };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const usage =
    'usage: node bench/generate-registry.mjs DIR|--out DIR [--count 1000] [--toolsets N (default count/30, at least 50)] [--tools 10] [--seed 1] [--no-evals]';
  let parsed;
  try {
    parsed = parseCli(process.argv.slice(2));
  } catch (error) {
    console.error(`${error.message}\n${usage}`);
    process.exit(2);
  }
  if (parsed.help || parsed.dir === undefined) {
    console.error(usage);
    process.exit(parsed.help ? 0 : 2);
  }
  const summary = await generateRegistry(parsed.dir, parsed.options);
  console.log(
    `wrote ${summary.count} capabilities and ${summary.toolsets} toolsets to ${path.join(parsed.dir, 'capabilities')} (${(summary.bytes / 1024).toFixed(0)} KiB, ${(summary.bytes / summary.files / 1024).toFixed(1)} KiB per file)`,
  );
}
