// The PROTOCOL.md that `capreg new <id>` writes: a complete capability that passes every rule, with
// the places to fill in said plainly. Every paragraph names the id, so two fresh scaffolds do not
// trip `duplicate-content`.
export const CAPABILITY_ID_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/**
 * An id or name YAML would read as something other than text when written plain: a number (`12`,
 * `1e3`, `0x1f`, `0o7`), a boolean or null (`true`, `False`, `null`). Such a value is quoted, or
 * the scaffold would fail `frontmatter-schema`. Ids and names hold only letters, digits, `-` and
 * spaces, so the double quotes need no escapes.
 */
const READ_AS_OTHER_THAN_TEXT = /^(?:null|true|false|[0-9].*)$/i;

function yamlText(value: string): string {
  return READ_AS_OTHER_THAN_TEXT.test(value) ? `"${value}"` : value;
}

/**
 * The scaffold of `id`. `schema`, when given, is the path of capreg's capability schema relative to
 * the capability's folder, for editors with the YAML language server; without one (no copy of the
 * schema that the repository can name portably) the comment is left out.
 */
export function scaffoldProtocol(id: string, today: string, schema?: string): string {
  const name = id
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
  const schemaComment = schema === undefined ? '' : `# yaml-language-server: $schema=${schema}\n`;
  return `---
${schemaComment}id: ${yamlText(id)}
name: ${yamlText(name)}
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
