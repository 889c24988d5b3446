// The frontmatter fields rules may rely on even when the document as a whole fails the schema.
import type { CapabilityFrontmatter } from './types.js';

const STRING_FIELDS = ['id', 'name', 'description', 'protocol_version', 'protocol_updated', 'lifecyclePhase'] as const;
const STRING_LIST_FIELDS = [
  'whenToUse',
  'requiredToolsets',
  'optionalToolsets',
  'states',
  'retiredTools',
  'tags',
  'evidenceTypes',
  'scopeConstraints',
] as const;

export function wellTypedFrontmatter(data: Record<string, unknown> | undefined): Partial<CapabilityFrontmatter> {
  const fm: Record<string, unknown> = {};
  if (!data) return fm;
  for (const field of STRING_FIELDS) {
    if (typeof data[field] === 'string') fm[field] = data[field];
  }
  for (const field of STRING_LIST_FIELDS) {
    const value = data[field];
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) fm[field] = value;
  }
  for (const field of ['inputSchema', 'outputSchema', 'metadata'] as const) {
    const value = data[field];
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) fm[field] = value;
  }
  if (Array.isArray(data.constraints)) fm.constraints = data.constraints;
  return fm;
}
