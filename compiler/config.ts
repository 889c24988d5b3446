// capreg.config.yaml: rule levels and options, file limits. Parsed and validated here (pure); the
// CLI reads the file. A broken config is a usage error (exit 2) that names the file and position.
import { createAjv, OWN_SCHEMAS } from './ajv.js';
import { suggestion } from './did-you-mean.js';
import { LineIndex, FILE_START } from './positions.js';
import type { AnyRule, ResolvedRuleSetting } from './rule.js';
import { rulesById } from './rules/index.js';
import { rangeForPath, parseYamlSource, escapePointer, isRecord } from './yaml-source.js';
import { LIMITS, type LimitName, type ReadLimits } from './limits.js';
import type { Range } from './types.js';
import { CONFIG_FILE } from './layout.js';

export { CONFIG_FILE };

const LIMIT_KEYS = Object.keys(LIMITS) as LimitName[];

export const DEFAULT_MAX_FILE_BYTES = LIMITS.maxFileBytes.default;
export const DEFAULT_MAX_PARSE_MS = LIMITS.maxParseMs.default;
export const MAX_PARSE_MS = LIMITS.maxParseMs.ceiling;

export interface ResolvedConfig extends Record<LimitName, number> {
  rules: Map<string, ResolvedRuleSetting>;
}

export function readLimits(config: ResolvedConfig): ReadLimits {
  return { maxFileBytes: config.maxFileBytes, maxFiles: config.maxFiles, maxTotalBytes: config.maxTotalBytes };
}

function defaultLimits(): Record<LimitName, number> {
  return Object.fromEntries(LIMIT_KEYS.map((key) => [key, LIMITS[key].default])) as Record<LimitName, number>;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(
    readonly file: string,
    readonly range: Range,
    message: string,
  ) {
    super(`${file}:${range.line}:${range.column}: ${message}`);
  }
}

const LEVELS = ['off', 'warn', 'error'] as const;
const TOP_LEVEL_KEYS = ['rules', 'limits'];
// `$data` lets an options schema relate two options (token-budget: bodyWarn <= bodyError).
const ajv = createAjv({ strict: false, useDefaults: true, $data: true, ...OWN_SCHEMAS });
// Keyed by the rule itself, not its id: a caller's rule table may hold another rule of the same id.
const optionValidators = new WeakMap<AnyRule, ReturnType<typeof ajv.compile>>();

export function validatorFor(rule: AnyRule): ReturnType<typeof ajv.compile> | undefined {
  if (!rule.meta.optionsSchema) return undefined;
  let validate = optionValidators.get(rule);
  if (!validate) {
    validate = ajv.compile({ ...rule.meta.optionsSchema, additionalProperties: false });
    optionValidators.set(rule, validate);
  }
  return validate;
}

export function defaultConfig(ruleTable: ReadonlyMap<string, AnyRule> = rulesById): ResolvedConfig {
  const rules = new Map<string, ResolvedRuleSetting>();
  for (const [id, rule] of ruleTable) rules.set(id, { level: rule.meta.defaultLevel, options: structuredClone(rule.meta.defaultOptions) });
  return { rules, ...defaultLimits() };
}

/** Parse a config file's text. Throws ConfigError (with the position) on any problem. */
export function parseConfig(content: string, file = CONFIG_FILE, ruleTable: ReadonlyMap<string, AnyRule> = rulesById): ResolvedConfig {
  // A BOM would shift every column of the first line by one.
  const text = content.replace(/^\uFEFF/, '');
  const source = parseYamlSource(text, new LineIndex(text));
  const first = source.problems[0];
  if (first) throw new ConfigError(file, first.range, first.message);
  const config = defaultConfig(ruleTable);
  const data = source.data ?? {};
  const at = (path: string, part: 'key' | 'value' = 'value'): Range => rangeForPath(source.ranges, path, FILE_START, part);
  if (!isRecord(data)) throw new ConfigError(file, FILE_START, 'the configuration must be a YAML mapping');

  for (const key of Object.keys(data)) {
    if (!TOP_LEVEL_KEYS.includes(key)) {
      throw new ConfigError(
        file,
        at(`/${escapePointer(key)}`, 'key'),
        `unknown setting "${key}" (expected one of ${TOP_LEVEL_KEYS.join(', ')})${suggestion(key, TOP_LEVEL_KEYS)}`,
      );
    }
  }

  if (data.limits !== undefined) {
    if (!isRecord(data.limits)) throw new ConfigError(file, at('/limits'), '`limits` must be a mapping');
    for (const [key, value] of Object.entries(data.limits)) {
      if (!(LIMIT_KEYS as string[]).includes(key)) {
        throw new ConfigError(
          file,
          at(`/limits/${escapePointer(key)}`, 'key'),
          `unknown limit "${key}" (expected one of ${LIMIT_KEYS.join(', ')})${suggestion(key, LIMIT_KEYS)}`,
        );
      }
      const { ceiling, unit } = LIMITS[key as LimitName];
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > ceiling) {
        throw new ConfigError(file, at(`/limits/${key}`), `\`limits.${key}\` must be a whole number of ${unit} from 1 to ${ceiling}`);
      }
      config[key as LimitName] = value;
    }
  }

  if (data.rules !== undefined) {
    if (!isRecord(data.rules)) throw new ConfigError(file, at('/rules'), '`rules` must be a mapping of rule id to level');
    for (const [id, value] of Object.entries(data.rules)) {
      const path = `/rules/${escapePointer(id)}`;
      const rule = ruleTable.get(id);
      if (!rule) {
        const hint = suggestion(id, ruleTable.keys()) || `; the rules are ${[...ruleTable.keys()].join(', ')}`;
        throw new ConfigError(file, at(path, 'key'), `unknown rule "${id}"${hint}`);
      }
      const [level, options] = Array.isArray(value) ? [value[0] as unknown, value[1] as unknown] : [value, undefined];
      if (Array.isArray(value) && (value.length < 1 || value.length > 2)) {
        throw new ConfigError(file, at(path), `rule "${id}" takes a level or [level, options]`);
      }
      if (typeof level !== 'string' || !(LEVELS as readonly string[]).includes(level)) {
        throw new ConfigError(
          file,
          at(Array.isArray(value) ? `${path}/0` : path),
          `level of rule "${id}" must be one of off, warn, error, not ${JSON.stringify(level)}${typeof level === 'string' ? suggestion(level, LEVELS) : ''}`,
        );
      }
      let resolvedOptions: unknown = structuredClone(rule.meta.defaultOptions);
      if (options !== undefined) {
        const validate = validatorFor(rule);
        if (!validate) throw new ConfigError(file, at(`${path}/1`), `rule "${id}" takes no options; set only its level, e.g. \`${id}: warn\``);
        const merged = { ...(rule.meta.defaultOptions as Record<string, unknown>), ...(isRecord(options) ? options : {}) };
        if (!isRecord(options) || !validate(merged)) {
          const error = validate.errors?.[0];
          const detail = !isRecord(options)
            ? 'options must be a mapping'
            : error?.keyword === 'additionalProperties'
              ? `unknown option "${String(error.params.additionalProperty)}"${suggestion(String(error.params.additionalProperty), Object.keys((rule.meta.optionsSchema?.properties as object | undefined) ?? {}))}`
              : `option ${error?.instancePath.slice(1) || ''} ${error?.message ?? 'is invalid'}`.replace(/\s+/g, ' ');
          throw new ConfigError(file, at(`${path}/1${error?.instancePath ?? ''}`), `rule "${id}": ${detail}`);
        }
        resolvedOptions = merged;
      }
      config.rules.set(id, { level: level as ResolvedRuleSetting['level'], options: resolvedOptions });
    }
  }
  return config;
}

/** A stable digest input for caches: the resolved settings of every rule and the limits. */
export function configFingerprint(config: ResolvedConfig): unknown {
  const limits = Object.fromEntries(LIMIT_KEYS.map((key) => [key, config[key]]));
  return { rules: [...config.rules.entries()].sort(([a], [b]) => (a < b ? -1 : 1)), ...limits };
}
