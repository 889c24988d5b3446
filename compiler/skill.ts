// The thin client skill (Agent Skills format: `name` + `description` frontmatter, then Markdown).
// It only teaches an agent how to find (list, then search when the list is compact) and load
// protocols in 500–800 tokens; every workflow lives on the server.
// `capreg build` writes it to dist/skill/SKILL.md. Pure: same options, same bytes.
import { toolNames } from './contract.js';

export interface ClientSkillOptions {
  /** The server's `--tool-prefix` (e.g. `yi_`), '' for none. */
  toolPrefix: string;
}

/** @throws RangeError when the prefix is not one the server accepts. */
export function renderClientSkill(options: ClientSkillOptions): string {
  const names = toolNames(options.toolPrefix);
  const list = names.listCapabilities;
  const find = names.findCapabilities;
  const get = names.getCapabilityProtocol;
  const user = names.getCurrentUser;
  return `---
name: capability-registry
description: Find and follow the capability protocols published by this organization's capreg MCP server. Use it before any task the organization may have a protocol for (reporting, automations, engineering workflows); the server decides which protocols you may use.
---

# Capability registry

The capreg MCP server holds the organization's protocols: step-by-step workflows written for you.
This skill only tells you how to find and load them. The protocols themselves are the rules.

## Tools

| Tool | Use |
| --- | --- |
| \`${list}\` | The capabilities you may use (no arguments). |
| \`${find}\` | Search them: \`{"query": "the request in your words"}\`, optionally \`lifecyclePhase\`, \`tags\`, \`limit\`. |
| \`${get}\` | The protocol of one capability (\`{"capabilityId": "..."}\`). |
| \`${user}\` | Who the server thinks you are, and your scopes. |

## How to work

1. Call \`${list}\` at the start of a task. Each entry has \`id\`, \`name\`, \`description\`,
   \`whenToUse\`, \`protocolTool\` and \`protocolInput\`.
2. If the answer has \`"complete": false\`, the catalog is too large to list: it shows only some
   entries and an \`overview\` of phases and tags. Call \`${find}\` with the user's request in
   their own words (English or Chinese), adding a \`lifecyclePhase\` or \`tags\` from the overview
   when they narrow it. Results come best first, with the fields that \`matched\`.
3. Pick the capability whose \`whenToUse\` triggers match the request. If none matches, say so and
   work without a protocol; if several match, ask which one is meant. A search hit is a candidate,
   not a match: read its description before you load it.
4. Call the entry's \`protocolTool\` with its \`protocolInput\`, exactly as given.
5. Follow the protocol step by step. Its rules, prohibitions and states override your habits.
6. When the protocol points at another capability, load that one the same way when you reach it.

## Rules

- Never keep a protocol in memory between tasks, and never work from a remembered copy: load it
  again every time. Protocols change, and the server always serves the current version.
- A listing holds for the task at hand. List again at the start of each new task, and when a
  protocol you were shown no longer loads (your access may have changed). If the new listing's
  \`catalogVersion\` equals the old one, nothing you may use has changed.
- Do not guess capability ids. Use only ids from the latest listing or search.
- When a protocol cannot be loaded (\`"success": false\`, an error, or no answer), say that it could
  not be loaded and stop that workflow. Do not improvise the steps from its name or description.
- Do not ask the server for capabilities you were not shown, and do not pass identities or scopes in
  tool arguments: the server knows you only by your credentials.
- A protocol may name tools you do not have in this session. When a step needs one, tell the
  user that step cannot be done here; never pretend to call it or make up its result.
- If the list is empty or a capability you expect is missing, call \`${user}\` and tell the user
  which identity and scopes the server sees.
`;
}
