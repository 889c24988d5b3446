// The PROTOCOL.md that `capreg new <id>` writes: a complete capability that passes every rule, with
// the places to fill in said plainly. Every paragraph names the id, so two fresh scaffolds do not
// trip `duplicate-content`.
export const CAPABILITY_ID_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

export function scaffoldProtocol(id: string, today: string): string {
  const name = id
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
  return `---
# yaml-language-server: $schema=../../compiler/schema/capability.schema.json
id: ${id}
name: ${name}
description: Describe in one or two sentences what ${id} does for the user.
whenToUse:
  - the user asks for ${name.toLowerCase()}
requiredToolsets: []
protocol_version: 0.1.0
protocol_updated: ${today}
---

# ${name}

Replace this paragraph with the goal of ${id}: the outcome the user wants and how the agent knows it is done.

## Steps

1. Confirm what the user wants from ${id} before acting.
2. Carry out the work, one step at a time, and report what you did.

## Rules

- Do not invent facts for ${id}: use only what the user or a tool returned.
- Never take an irreversible action in ${id} without the user's explicit confirmation.
`;
}
