// The MCP Skills extension on a server (docs/skills.md): `skills/list`, `skills/get` and reads of
// `skill://…/SKILL.md`, thin over the domain in ./skills.ts. The caller and the catalog are looked
// up on every request; every URI that yields no skill gets the one -32602 error of
// `capability://` reads, byte for byte.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { askedFor } from '../audit.js';
import { LooseReadResourceRequestSchema, readCapability, requestParam } from '../resources/capability-resource.js';
import { callerCheckedOf, type ToolDeps } from '../tools/deps.js';
import { NOT_FOUND_OR_NOT_ACCESSIBLE } from '../tools/results.js';
import { isSkillUri, Skills, SkillsError, skillsPage, SKILLS_TTL_MS, type ServedSkill } from './skills.js';

// Params are taken loosely and checked in the domain: a schema failure would answer with the SDK's
// own message, which differs from the uniform one.
const ListSkillsRequestSchema = z.object({ method: z.literal('skills/list'), params: z.unknown().optional() });
const GetSkillRequestSchema = z.object({ method: z.literal('skills/get'), params: z.unknown().optional() });

/** The listing is per caller: a shared cache must never hand it to anyone else. */
const CACHE_FIELDS = Object.freeze({ ttlMs: SKILLS_TTL_MS, cacheScope: 'private' as const });

/** One Skills domain per process: its caches are keyed by catalog and listing objects. */
const skillsByNames = new WeakMap<ToolDeps['names'], Skills>();

function skillsFor(deps: ToolDeps): Skills {
  let skills = skillsByNames.get(deps.names);
  if (skills === undefined) {
    skills = new Skills(deps.names);
    skillsByNames.set(deps.names, skills);
  }
  return skills;
}

function toMcpError(error: unknown): never {
  if (error instanceof SkillsError) {
    if (error.code === 'not-accessible') throw new McpError(ErrorCode.InvalidParams, NOT_FOUND_OR_NOT_ACCESSIBLE);
    if (error.code === 'invalid-cursor') throw new McpError(ErrorCode.InvalidParams, error.message);
    throw new McpError(ErrorCode.InternalError, error.message);
  }
  throw error;
}

/** Looks the skill up for the caller now, and records the handout in the audit log (if any). */
async function servedSkill(deps: ToolDeps, uri: unknown, via: string): Promise<ServedSkill> {
  const revision = deps.catalog().revision;
  const asked = askedFor(uri);
  try {
    const skill = await skillsFor(deps).get(deps.caller(), deps.catalog(), deps.userCapabilities, uri, callerCheckedOf(deps));
    const { metadata } = skill.entry.frontmatter;
    deps.audit?.({
      via,
      capabilityId: metadata['capreg-id'] ?? asked,
      outcome: 'served',
      revision,
      protocolVersion: metadata['version'],
      digest: skill.entry.resources[0]?.digest,
    });
    return skill;
  } catch (error) {
    const failed = error instanceof SkillsError && error.code === 'unavailable';
    deps.audit?.({ via, capabilityId: asked, outcome: failed ? 'failed' : 'uniform-error', revision });
    return toMcpError(error);
  }
}

async function readSkill(deps: ToolDeps, uri: string): Promise<ReadResourceResult> {
  const skill = await servedSkill(deps, uri, 'resources/read');
  return { contents: [{ uri: skill.entry.uri, mimeType: 'text/markdown', text: skill.text }] };
}

export function registerSkills(server: McpServer, deps: ToolDeps): void {
  server.server.setRequestHandler(ListSkillsRequestSchema, async (request) => {
    try {
      const entries = await skillsFor(deps).list(deps.caller(), deps.catalog(), deps.userCapabilities, callerCheckedOf(deps));
      const page = skillsPage(entries, requestParam(request.params, 'cursor'));
      return { resultType: 'complete', ...page, ...CACHE_FIELDS };
    } catch (error) {
      return toMcpError(error);
    }
  });
  server.server.setRequestHandler(GetSkillRequestSchema, async (request) => {
    const skill = await servedSkill(deps, requestParam(request.params, 'uri'), 'skills/get');
    return { resultType: 'complete', skill: skill.entry, ...CACHE_FIELDS };
  });
  // Skill files are read with resources/read; anything else (non-strings too) keeps the capability
  // resource's answers.
  server.server.setRequestHandler(LooseReadResourceRequestSchema, (request) => {
    const uri = requestParam(request.params, 'uri');
    return typeof uri === 'string' && isSkillUri(uri) ? readSkill(deps, uri) : readCapability(deps, uri);
  });
}
