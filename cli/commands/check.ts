// capreg check --against <git-ref>: the version gate (SPEC §5). Compiles the registry in the working
// tree (uncommitted changes included) and the same registry at <git-ref> (read from Git, nothing
// checked out) with the same compiler and configuration, then fails when a changed capability's
// protocol_version bump is missing, too small, goes down, or its protocol_updated does not move with it.
// When a name, description, trigger or tag changed, it also runs the evals over both trees and fails
// when a shouldMatch request no longer goes first to its capability (compiler/gate/routing.ts).
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { protocolFiles } from '../../compiler/compile.js';
import { isEvalsFile, isProtocolFile } from '../../compiler/layout.js';
import { canonicalJson, sha256Hex } from '../../compiler/canonical.js';
import { readLimits } from '../../compiler/config.js';
import { countsOf, FORMATS } from '../../compiler/formatters/index.js';
import { compareRegistries, compareRouting, idNotFolder, type GateReport, type GateResult, type RoutingResult } from '../../compiler/gate/index.js';
import { compareDiagnostics, createLintRegistry } from '../../compiler/lint.js';
import { isToolsetsFile, toolsetsSourceOf, usableToolsets, type ParsedToolsets } from '../../compiler/toolsets.js';
import { FILE_START } from '../../compiler/positions.js';
import { parseEvalsFiles } from '../../compiler/evals/file.js';
import type { LintRegistry } from '../../compiler/rule.js';
import type { CapabilityDocument, Diagnostic, Range, RegistryInput } from '../../compiler/types.js';
import { compileRoot } from '../compile-root.js';
import { UsageError, type CliContext, type Command } from '../context.js';
import { openGitBase } from '../git-registry.js';
import { loadConfig } from '../load-config.js';
import { parseFlags } from '../command-table.js';
import { exitCodeFor, parseJobs, parseMaxWarnings, pickFormatter, wholeNumber } from '../options.js';
import { GIT_IDLE_SECONDS } from '../git-config.js';
import { overBudgetProblem, parseInWorkers, parsesStarted, startParseWorker, threadCount } from '../parse-workers.js';
import { findRegistryRoot, namedPath } from '../root.js';
import { outputLinkProblem } from '../build-outputs.js';
import { compareRoutingThreaded } from '../routing-threads.js';
import { formatTimings, timingsFromEnv } from '../timing.js';

/** Base documents parsed ahead, by `path\0sha256`; undefined for one over the parse budget. */
export type EarlyDocuments = ReadonlyMap<string, CapabilityDocument | undefined>;

const documentKey = (file: string, content: string): string => `${file}\0${sha256Hex(content)}`;

/**
 * Parse the base tree's protocol files that Git says the change touched, while the new tree is
 * compiled: the workers start next to the new tree's, rather than after its lint. A hint only:
 * {@link baseDocuments} decides by bytes which base files need a document of their own.
 */
export async function parseEarly(
  input: RegistryInput,
  changed: ReadonlySet<string> | undefined,
  maxParseMs: number,
  /** `--jobs`: parse worker threads at most; the cores available when undefined. */
  jobs?: number,
  /** Filled with the base files refused for memory (ParseOptions.overMemory). */
  overMemory?: Set<string>,
): Promise<EarlyDocuments> {
  const files = changed === undefined ? [] : protocolFiles(input).filter((file) => changed.has(file.path));
  const parsed = await parseInWorkers(files, { maxParseMs, threads: threadsFor(files.length, jobs), overMemory });
  return new Map(files.map((file, index) => [documentKey(file.path, file.content), parsed[index]]));
}

/**
 * Parsed documents of the base tree. A file with the same path and bytes as in the new tree is the
 * same document, so only files the change touched are parsed again, under the same parse budget
 * (taken from `early` when they were parsed ahead). `overBudget` lists the base files that could
 * not be parsed within it; `overMemory` is filled with those of them refused for memory.
 */
export async function baseDocuments(
  input: RegistryInput,
  headDocuments: readonly CapabilityDocument[],
  maxParseMs: number,
  early: EarlyDocuments = new Map(),
  jobs?: number,
  overMemory?: Set<string>,
): Promise<{ documents: CapabilityDocument[]; overBudget: string[] }> {
  const known = new Map(headDocuments.map((document) => [`${document.file}\0${document.contentHash}`, document]));
  const files = protocolFiles(input);
  const keys = files.map((file) => documentKey(file.path, file.content));
  const reused = keys.map((key) => known.get(key) ?? early.get(key));
  const missing = files.filter((_, index) => reused[index] === undefined && !early.has(keys[index]!));
  // What an early parse said of these files (it failed, or never ran) is said again here.
  for (const file of missing) overMemory?.delete(file.path);
  const parsed = await parseInWorkers(missing, { maxParseMs, threads: threadsFor(missing.length, jobs), overMemory });
  const fresh = new Map(missing.map((file, index) => [file.path, parsed[index]]));
  const documents = files.map((file, index) => reused[index] ?? fresh.get(file.path));
  return {
    documents: documents.filter((document): document is CapabilityDocument => document !== undefined),
    overBudget: files.filter((_, index) => documents[index] === undefined).map((file) => file.path),
  };
}

function threadsFor(files: number, jobs: number | undefined): number | undefined {
  return jobs === undefined ? undefined : threadCount(files, jobs);
}

/**
 * The base tree as rules see it, for routing. An evals file with the same path and bytes as in the
 * new tree is the new tree's, parsed once (each distinct file is parsed once, as for protocols).
 */
export function baseRegistry(
  input: RegistryInput,
  documents: CapabilityDocument[],
  toolsets: ParsedToolsets,
  headInput: RegistryInput,
  head: LintRegistry,
): LintRegistry {
  const headTexts = new Map(headInput.files.map((file) => [file.path, file.content]));
  const headEvals = new Map(head.evals.map((parsed) => [parsed.file, parsed]));
  const evals = parseEvalsFiles(input.files, (file, content) => (headTexts.get(file) === content ? headEvals.get(file) : undefined));
  return createLintRegistry(documents, toolsets, input, evals);
}

/**
 * The new tree's documents of the files the change touched are what the gate compares, so one
 * taken from the parse cache is parsed again and must be the same: the cache is trusted as much as
 * the folder it is in, and in a pull request that folder is the author's (a committed
 * `.capreg/cache` could otherwise show the gate another text than the file's). Unchanged files need
 * no such check: the gate compares them by bytes.
 */
async function verifyCachedChanges(
  headInput: RegistryInput,
  baseInput: RegistryInput,
  fromCache: ReadonlySet<string>,
  capabilities: readonly { document: CapabilityDocument }[],
  maxParseMs: number,
  jobs: number | undefined,
): Promise<void> {
  if (fromCache.size === 0) return;
  const baseTexts = new Map(protocolFiles(baseInput).map((file) => [file.path, file.content]));
  const touched = protocolFiles(headInput).filter((file) => fromCache.has(file.path) && baseTexts.get(file.path) !== file.content);
  if (touched.length === 0) return;
  const documents = new Map(capabilities.map(({ document }) => [document.file, document]));
  const overMemory = new Set<string>();
  const fresh = await parseInWorkers(touched, { maxParseMs, threads: threadsFor(touched.length, jobs), overMemory });
  touched.forEach((file, index) => {
    const cached = documents.get(file.path);
    const parsed = fresh[index];
    if (parsed === undefined) {
      // Not a mismatch: the file itself is over the budget here, which a check without the cache reports.
      throw new UsageError(
        `${file.path}: ${overBudgetProblem(file.path, maxParseMs, overMemory)}. It was parsed again to confirm the parse cache's document of it, ` +
          'so nothing was checked: run with --no-cache to have it reported as over the budget',
      );
    }
    if (cached && canonicalJson(cached) === canonicalJson(parsed)) return;
    throw new UsageError(
      `the parse cache holds a document for ${file.path} that parsing the file again did not confirm (was .capreg/cache changed or committed?); ` +
        'nothing was checked: delete .capreg/cache, or run with --no-cache',
    );
  });
}

/** A base file the gate cannot compare (`what` it would have compared): an error, so that the gate fails closed. */
function uncomparable(file: string, range: Range, against: string, problem: string, what = 'this capability'): Diagnostic {
  return { file, ...range, severity: 'error', ruleId: 'registry-files', message: `at ${against}: ${problem}; the version gate cannot compare ${what}` };
}

/**
 * A base file over the parse budget, one the reader refused (over `limits.maxFileBytes`, binary,
 * not UTF-8, a link out of the registry), or a toolsets file that does not parse. Left out, it
 * would make its capability "added", its toolsets or its requests' routing not compared, so that a
 * change of the configuration (or of the file) could carry a protocol change past the gate unbumped.
 */
function baseUnreadable(
  input: RegistryInput,
  toolsets: ParsedToolsets,
  overBudget: readonly string[],
  overMemory: ReadonlySet<string>,
  against: string,
  maxParseMs: number,
): Diagnostic[] {
  const budget = overBudget.map((file) => uncomparable(file, FILE_START, against, overBudgetProblem(file, maxParseMs, overMemory)));
  const refused = input.files.flatMap((file) => {
    if (file.problem === undefined) return [];
    if (isProtocolFile(file.path)) return [uncomparable(file.path, FILE_START, against, file.problem)];
    if (isToolsetsFile(file.path)) return [uncomparable(file.path, FILE_START, against, file.problem, 'the toolsets')];
    if (isEvalsFile(file.path)) return [uncomparable(file.path, FILE_START, against, file.problem, 'the routing of its requests')];
    return [];
  });
  // The first problem of each toolsets file that does not parse (lint of the new tree reports them all there).
  const unparsed = (toolsets.parts ?? [toolsets]).flatMap((part) => {
    const first = part.problems[0];
    return part.present && first !== undefined ? [uncomparable(part.file, first.range, against, first.message, 'the toolsets')] : [];
  });
  return [...budget, ...refused, ...unparsed];
}

/**
 * The gate pairs capabilities by folder, and the manifest serves each under its `id`: when the two
 * differ (a registry that turned id-matches-folder off), another folder could take over an id with
 * no bump. An error on either side, whatever that rule's level.
 */
function idsNotFolders(
  base: readonly CapabilityDocument[],
  head: readonly CapabilityDocument[],
  against: string,
  /** The new tree's files lint already failed for it (one cause, one diagnostic). */
  reported: ReadonlySet<string>,
): Diagnostic[] {
  const diagnostic = (document: CapabilityDocument, id: string, at: string): Diagnostic => ({
    file: document.file,
    ...FILE_START,
    severity: 'error',
    ruleId: 'version-bump',
    message: `${at}serves id \`${id}\` from folder \`${document.folder}\`; the version gate pairs capabilities by folder, so it cannot compare this capability (make the id its folder's name)`,
  });
  return [
    ...base.flatMap((document) => {
      const id = idNotFolder(document);
      return id === undefined ? [] : [diagnostic(document, id, `at ${against}: `)];
    }),
    ...head.flatMap((document) => {
      const id = idNotFolder(document);
      return id === undefined || reported.has(document.file) ? [] : [diagnostic(document, id, '')];
    }),
  ];
}

/** One clause for the stderr line: what the routing comparison found. */
function describeRouting(routing: RoutingResult): string {
  if (routing.status === 'unchanged') return 'routing unchanged (no name, description, trigger or tag changed)';
  if (routing.status === 'lint-errors') return 'routing not compared (the new tree has lint errors)';
  if (routing.status === 'too-many-requests') return `routing not compared (${routing.requests} eval requests, over the limit)`;
  const lost = routing.moved.filter((request) => request.lost).length;
  return `${routing.moved.length} of ${routing.requests} eval requests moved${lost === 0 ? '' : `, ${lost} away from their capability`}`;
}

function describe(result: GateResult, routing: RoutingResult, against: string, commit: string): string {
  const count = (kind: string): number => result.changes.filter((change) => change.kind === kind).length;
  const failed = result.changes.filter((change) => change.verdict === 'fail').length;
  return (
    `capreg check: against ${against} (${commit.slice(0, 12)}): ${count('changed')} changed, ${count('added')} added, ` +
    `${count('removed')} removed, ${count('unchanged')} unchanged; ${failed === 0 ? 'every version bump is right' : `${failed} failed the version gate`}; ` +
    `${describeRouting(routing)}\n`
  );
}

export const checkCommand: Command = async (argv: string[], context: CliContext) => {
  const { values } = parseFlags('check', argv);
  if (values.against === undefined) {
    throw new UsageError('--against <git-ref> is required: the Git ref to compare with, e.g. `capreg check --against origin/main`');
  }
  const formatter = await pickFormatter(values.format, { gate: true });
  const maxWarnings = parseMaxWarnings(values['max-warnings']);
  const jobs = parseJobs(values.jobs);
  const gitTimeout =
    values['git-timeout'] === undefined ? GIT_IDLE_SECONDS.default : wholeNumber('--git-timeout', values['git-timeout'], 1, GIT_IDLE_SECONDS.ceiling);
  const root = findRegistryRoot(context.cwd, values.root);
  const timings = timingsFromEnv(context.env);
  // A summary file inside the registry root is in the pull request's files: a link committed there
  // would have the summary appended wherever it points (cli/build-outputs.ts).
  const summaryProblem = values.summary === undefined ? undefined : outputLinkProblem(root, path.resolve(context.cwd, values.summary));
  if (summaryProblem !== undefined) throw new UsageError(`--summary ${values.summary}: ${summaryProblem}`);
  // As lint and build do: a parse worker loads its modules while Git and the disk are read.
  startParseWorker();
  const parsesBefore = parsesStarted();

  // Git first: a missing ref or a shallow clone is reported before any work is done. The base tree
  // is then read by git while the new tree is compiled.
  const config = await loadConfig(root);
  const base = await openGitBase(root, values.against, namedPath(context.cwd, context.env, root), { idleMs: gitTimeout * 1000 });
  // A cache is never source: one committed would show the next build (and, for unchanged files,
  // this gate) documents that no file of the change parses to.
  if (await base.tracksCache()) {
    throw new UsageError(
      ".capreg/ (capreg's caches) is committed to Git, and a build from this commit would trust it; " +
        'remove it with `git rm -r --cached .capreg` and keep .capreg/ in .gitignore',
    );
  }
  const baseRead = base.read(readLimits(config));
  /** Whether the early parse of the base's changed files has begun (and taken the spare, or a worker of its own). */
  let earlyBegun = false;
  // A new tree's parse of a few files (its changes, with the base's parse cache) keeps its worker,
  // code hot, for the base's changed files: only while their parse has not begun. Once it has, the
  // worker would sit idle to the end, its isolate and the new tree's garbage held (+17 MiB of peak
  // RSS for a check of three protocols without a cache).
  const headCompile = compileRoot(root, { cache: !values['no-cache'], jobs, timings, keepOneWorker: () => !earlyBegun });
  // A failed early parse is only a lost head start: baseDocuments parses those files again (and
  // reports what fails then).
  // Git's diff is asked only once the base is read within the limits: on a tree of millions of
  // files, the diff alone takes git seconds and hundreds of MB.
  /** Base files refused for memory rather than time, by the early parse or baseDocuments. */
  const baseOverMemory = new Set<string>();
  const early = baseRead
    .then(async (input) => [input, await base.changedPaths()] as const)
    .then(([input, changed]) => {
      // Whether the new tree's parse has begun: its workers are all started then.
      const headParsing = parsesStarted() > parsesBefore;
      earlyBegun = true;
      const parsing = parseEarly(input, changed, config.maxParseMs, jobs, baseOverMemory);
      // parseEarly took the spare worker, when it had files to parse: the one loaded at the start,
      // or the one the new tree's parse kept (with the base's parse cache, that parse is of a few
      // files and over by now). Another is loaded only while the new tree's parse has not begun:
      // that parse, or the one that confirms the new tree's cached documents (verifyCachedChanges),
      // then uses it. Once it has begun (as it nearly always has by the time Git answers), a spare
      // loaded now would never be used, and its module load (0.3–0.5 s of CPU) would be taken from
      // the parse.
      if (!headParsing) startParseWorker();
      return parsing;
    })
    .catch((): EarlyDocuments => new Map());
  const [baseInput, { input: headInput, result: lint, overBudget, fromCache }] = await Promise.all([baseRead, headCompile]);
  await verifyCachedChanges(headInput, baseInput, fromCache, lint.registry.capabilities, config.maxParseMs, jobs);
  const headDocuments = lint.registry.capabilities.map((capability) => capability.document);
  const baseToolsets = toolsetsSourceOf(baseInput.files);
  const baseParse = await baseDocuments(baseInput, headDocuments, config.maxParseMs, await early, jobs, baseOverMemory);
  // A head file over the parse budget that lint reported (registry-files) is not also "removed". In
  // a registry that turned that rule off, the capability has left the catalog unsaid, as one whose
  // file the reader refused: the gate says it was removed (a warning), rather than nothing.
  const reportedByLint = new Set(lint.diagnostics.filter((d) => d.ruleId === 'registry-files').map((d) => d.file));
  const overBudgetHead = new Set(overBudget.filter((file) => reportedByLint.has(file)));
  const baseDiagnostics = [
    ...baseUnreadable(baseInput, baseToolsets, baseParse.overBudget, baseOverMemory, values.against, config.maxParseMs),
    ...idsNotFolders(
      baseParse.documents,
      headDocuments,
      values.against,
      new Set(lint.diagnostics.filter((d) => d.ruleId === 'id-matches-folder' && d.severity === 'error').map((d) => d.file)),
    ),
  ];
  // The toolsets served on each side, compared unless one side's files do not parse: a base file is
  // an error of its own (above), the new tree's an error of lint (the check fails on it; comparing
  // with a half-read file would call its toolsets removed). A registry that lowered that rule serves
  // what parsed, so that is what is compared.
  const compareToolsets = !baseDiagnostics.some((diagnostic) => isToolsetsFile(diagnostic.file)) && !(lint.registry.toolsetsUnread && lint.errorCount > 0);
  const gate = compareRegistries(
    baseParse.documents.filter((document) => !overBudgetHead.has(document.file)),
    headDocuments,
    {
      ...(compareToolsets ? { toolsets: { before: usableToolsets(baseToolsets.data), after: lint.registry.toolsets } } : {}),
      uncompared: new Map(baseDiagnostics.filter((diagnostic) => isProtocolFile(diagnostic.file)).map((diagnostic) => [diagnostic.file, diagnostic.message])),
    },
  );
  // Routing needs the new tree's catalog, which lint errors leave unknown (the check fails on them anyway).
  // One thread asked for: both trees' routing on this one.
  const route = jobs === 1 ? compareRouting : compareRoutingThreaded;
  const routing: RoutingResult =
    lint.errorCount > 0
      ? { status: 'lint-errors', requests: 0, moved: [], diagnostics: [] }
      : await route(baseRegistry(baseInput, baseParse.documents, baseToolsets, headInput, lint.registry), lint.registry, values.against);

  const counts = countsOf([...lint.diagnostics, ...gate.diagnostics, ...routing.diagnostics, ...baseDiagnostics].sort(compareDiagnostics));
  const exitCode = exitCodeFor(counts.errorCount, counts.warningCount, maxWarnings);
  const report: GateReport = {
    ...counts,
    gate: {
      against: values.against,
      baseCommit: base.commit,
      passed: exitCode === 0,
      changes: gate.changes,
      lint: { errorCount: lint.errorCount, warningCount: lint.warningCount },
      routing: { status: routing.status, requests: routing.requests, moved: routing.moved },
    },
  };
  context.stdout(formatter(report));
  if (values.summary !== undefined) {
    const summaryFile = path.resolve(context.cwd, values.summary);
    const text = (await FORMATS.markdown.load())(report);
    let file: FileHandle | undefined;
    try {
      // A regular file only (GITHUB_STEP_SUMMARY is one): a FIFO without a reader would block the
      // check for ever, so it is opened without waiting and refused.
      file = await open(summaryFile, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NONBLOCK ?? 0));
      if (!(await file.stat()).isFile()) throw new Error('not a regular file');
      await file.appendFile(text);
    } catch (error) {
      throw new UsageError(`--summary ${values.summary}: cannot write ${summaryFile}: ${(error as Error).message}`);
    } finally {
      await file?.close();
    }
  }
  context.stderr(describe(gate, routing, values.against, base.commit));
  if (maxWarnings !== undefined && counts.errorCount === 0 && counts.warningCount > maxWarnings) {
    context.stderr(`capreg: too many warnings (${counts.warningCount}, --max-warnings ${maxWarnings})\n`);
  }
  if (timings) {
    // The comparison, routing and the report; the base tree is read and parsed during read and parse.
    timings.mark('gate');
    context.stderr(formatTimings(timings));
  }
  return exitCode;
};
