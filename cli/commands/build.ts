// capreg build: lint, then write dist/manifest.json (and the thin client skill) atomically.
// On any lint error nothing is written and an existing manifest is left untouched.
// The compiler is imported only when the build cache cannot answer: a rebuild with nothing changed
// loads none of it (see build-cache.ts).
import { existsSync, realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { renderClientSkill } from '../../compiler/skill.js';
import { removeStaleTemporaries, writeFileAtomic, writeFilesAtomic } from '../../server/atomic-write.js';
import { KEY_FILE_LIMITS, readBounded } from '../../server/read-file.js';
import { buildKey, cacheFolderUsable, cachedBuild, recordBuild, type BuildKeyOptions } from '../build-cache.js';
import { BUILD_OUTPUTS, DEFAULT_OUT_DIR, outputLinkProblem } from '../build-outputs.js';
import { UsageError, type CliContext, type Command } from '../context.js';
import { gitSource, sourceWarning } from '../git-source.js';
import { parseFlags } from '../command-table.js';
import { startParseWorker } from '../parse-workers.js';
import { builtAtFrom, exitCodeFor, parseJobs, parseMaxWarnings, pickFormatter } from '../options.js';
import { findRegistryRoot } from '../root.js';
import { formatTimings, timingsFromEnv, type Timings } from '../timing.js';
import type { CompileResult } from '../../compiler/compile.js';
import type { Manifest } from '../../compiler/types.js';
import { CAPREG_VERSION } from '../../compiler/contract.js';
import type { Formatter } from '../../compiler/formatters/index.js';
import { parseSigningKey, signDetached, SigningKeyError, type SigningKey } from '../../server/signature.js';

interface BuildSettings {
  root: string;
  outDir: string;
  formatter: Formatter;
  maxWarnings: number | undefined;
  cache: boolean;
  /** `--jobs`: parse worker threads at most; the cores available when undefined. */
  jobs: number | undefined;
  builtAt: string | undefined;
  /** dist/skill/SKILL.md, rendered for the server's tool prefix. */
  clientSkill: string;
  /** `--sign-key`: manifest.json.sig is written beside the manifest. */
  signingKey: SigningKey | undefined;
  /** CAPREG_TIMING (a build without --watch). */
  timings: Timings | undefined;
}

async function buildOnce(settings: BuildSettings, context: CliContext): Promise<number> {
  const { source, problem } = await gitSource(settings.root);
  if (problem !== undefined) context.stderr(sourceWarning('capreg build', problem));
  const keyOptions: BuildKeyOptions = {
    outDir: settings.outDir,
    builtAt: settings.builtAt,
    source,
    extra: { clientSkill: settings.clientSkill, signedBy: settings.signingKey?.kid ?? null },
  };
  const key = settings.cache && cacheFolderUsable(settings.root) ? buildKey(settings.root, keyOptions) : undefined;
  const cached = key === undefined ? undefined : await cachedBuild(settings.root, key, settings.outDir);
  if (cached && (cached.wroteOutputs || cached.report.errorCount > 0)) {
    context.stdout(settings.formatter(cached.report));
    const code = exitCodeFor(cached.report.errorCount, cached.report.warningCount, settings.maxWarnings);
    if (code !== 0) {
      context.stderr(`capreg build: ${cached.report.errorCount > 0 ? `${cached.report.errorCount} error(s)` : 'too many warnings'}; nothing written\n`);
      return code;
    }
    context.stderr(`capreg build: ${cached.summary} is up to date (nothing changed since the last build)\n`);
    return 0;
  }

  // The parse worker loads its modules while this thread loads the compiler and reads the registry.
  startParseWorker();
  const { compileRoot } = await import('../compile-root.js');
  const { result } = await compileRoot(settings.root, { cache: settings.cache, jobs: settings.jobs, timings: settings.timings });
  context.stdout(settings.formatter(result));
  const code = exitCodeFor(result.errorCount, result.warningCount, settings.maxWarnings);
  if (code !== 0) {
    context.stderr(`capreg build: ${result.errorCount > 0 ? `${result.errorCount} error(s)` : 'too many warnings'}; nothing written\n`);
    if (key !== undefined && result.errorCount > 0) await recordBuild(settings.root, key, keyOptions, { report: result, outputs: [], summary: '' });
    return code;
  }
  const { summary, outputs } = await writeBuild(settings, context, result, source);
  if (key !== undefined) {
    await recordBuild(settings.root, key, keyOptions, {
      report: result,
      outputs,
      summary,
    });
  }
  return 0;
}

/** Emit the manifest of a compile without errors and write the outputs (atomically); the summary line is printed. */
async function writeBuild(
  settings: BuildSettings,
  context: CliContext,
  result: CompileResult,
  source: Manifest['source'],
): Promise<{ summary: string; outputs: { path: string; content: string | Uint8Array }[] }> {
  const [{ emitManifest }, { manifestBytes, manifestContentProblem }] = await Promise.all([
    import('../../compiler/compile.js'),
    import('../../compiler/manifest.js'),
  ]);
  const manifest = emitManifest(result, {
    source,
    generator: `capreg ${CAPREG_VERSION}`,
    ...(settings.builtAt ? { builtAt: settings.builtAt } : {}),
  });
  // Lint passed, but a registry may have turned off the rules that keep each capability whole: a
  // manifest that serve and export would refuse is not written.
  const problem = manifestContentProblem(manifest);
  if (problem !== undefined) {
    // The entry's file: the first capability whose frontmatter gave it its id (or none).
    const entry = problem.capabilityIndex === undefined ? undefined : manifest.capabilities[problem.capabilityIndex];
    const file = entry && result.registry.capabilities.find(({ document }) => document.frontmatter.data?.id === entry.id)?.document.file;
    throw new UsageError(
      `the manifest would be refused by serve and export (${problem.message}${file ? `, from ${file}` : ''}), so nothing was written: ` +
        'turn frontmatter-schema and id-matches-folder back on in capreg.config.yaml and fix what they report',
    );
  }
  const manifestPath = path.join(settings.outDir, BUILD_OUTPUTS.manifest);
  // Made once, as bytes: the signature, the file and the build record take them (a manifest of
  // 10,000 capabilities is ~70 MB, and each encoding of its text took ~0.5 s).
  const bytes = manifestBytes(manifest);
  const skillPath = path.join(settings.outDir, BUILD_OUTPUTS.skill);
  const signaturePath = path.join(settings.outDir, BUILD_OUTPUTS.signature);
  // Ed25519 signatures are deterministic: the same manifest and key give the same .sig.
  const signature = settings.signingKey ? `${await signDetached(bytes, settings.signingKey)}\n` : undefined;
  try {
    // A build killed while it wrote (Ctrl-C, SIGKILL) left a temporary file as large as the manifest.
    await removeStaleTemporaries([manifestPath, signaturePath, skillPath]);
    if (signature === undefined) {
      // A signature left from an earlier signed build would not match this manifest.
      await rm(signaturePath, { force: true });
      await writeFileAtomic(manifestPath, bytes);
    } else {
      // The signature first: a server that reads between the two renames sees the old manifest
      // with the new signature, refuses the pair, and retries.
      await writeFilesAtomic([
        { target: signaturePath, content: signature },
        { target: manifestPath, content: bytes },
      ]);
    }
    await writeFileAtomic(skillPath, settings.clientSkill);
  } catch (error) {
    // An output folder that cannot be written is the user's to fix, not a crash: exit 2, no stack.
    throw new UsageError(`cannot write the build output in ${settings.outDir}: ${(error as Error).message}`);
  }
  const signed = settings.signingKey ? `, signed by ${settings.signingKey.kid}` : '';
  const summary = `${path.relative(settings.root, manifestPath) || manifestPath} (${manifest.capabilities.length} capabilities, revision ${manifest.revision.slice(0, 19)}…${signed})`;
  context.stderr(`capreg build: wrote ${summary}\n`);
  const outputs = [
    { path: manifestPath, content: bytes },
    ...(signature !== undefined ? [{ path: signaturePath, content: signature }] : []),
    { path: skillPath, content: settings.clientSkill },
  ];
  return { summary, outputs };
}

export const buildCommand: Command = async (argv, context) => {
  const { values } = parseFlags('build', argv);
  let clientSkill: string;
  try {
    clientSkill = renderClientSkill({ toolPrefix: values['tool-prefix'] ?? '' });
  } catch (error) {
    throw new UsageError(`--tool-prefix: ${(error as Error).message}`);
  }
  const jobs = parseJobs(values.jobs);
  const root = findRegistryRoot(context.cwd, values.root);
  const settings: BuildSettings = {
    root,
    outDir: path.resolve(values.out !== undefined ? context.cwd : root, values.out ?? DEFAULT_OUT_DIR),
    formatter: await pickFormatter(values.format),
    maxWarnings: parseMaxWarnings(values['max-warnings']),
    cache: !values['no-cache'],
    jobs,
    builtAt: builtAtFrom(context.env),
    clientSkill,
    signingKey: values['sign-key'] !== undefined ? await readSigningKey(path.resolve(context.cwd, values['sign-key'])) : undefined,
    timings: timingsFromEnv(context.env),
  };
  // The build would read its own outputs as registry files (and under --watch, rebuild for ever).
  // Compared as real paths: `--out link/x`, where link leads into capabilities/, is inside it too.
  const capabilities = realPathAsFarAsItExists(path.join(root, 'capabilities'));
  const outDir = realPathAsFarAsItExists(settings.outDir);
  if (outDir === capabilities || outDir.startsWith(`${capabilities}${path.sep}`)) {
    throw new UsageError(
      `--out ${values.out ?? DEFAULT_OUT_DIR}: the output folder must not be inside capabilities/, which the build reads; use dist/ or a folder outside the registry's capabilities`,
    );
  }
  // dist/ and dist/skill/ may be links the pull request committed: never written through out of the root.
  for (const folder of [settings.outDir, path.dirname(path.join(settings.outDir, BUILD_OUTPUTS.skill))]) {
    const problem = outputLinkProblem(root, folder);
    if (problem !== undefined) throw new UsageError(`--out ${values.out ?? DEFAULT_OUT_DIR}: the build writes through ${problem}`);
  }
  if (!values.watch) {
    const code = await buildOnce(settings, context);
    const { timings } = settings;
    if (timings) {
      // What followed the lint (the report, the outputs and the build record), or all of an up-to-date build.
      timings.mark(timings.phases.size === 0 ? 'start' : 'output');
      context.stderr(formatTimings(timings));
    }
    return code;
  }
  return watchAndBuild(settings, context);
};

/** The `--sign-key` file, read once at start: a missing or unusable key is a usage error (exit 2). */
async function readSigningKey(file: string): Promise<SigningKey> {
  const read = await readBounded(file, KEY_FILE_LIMITS);
  if (!read.ok) throw new UsageError(`--sign-key: cannot read ${file}: ${read.reason}`);
  try {
    return parseSigningKey(read.text);
  } catch (error) {
    if (error instanceof SigningKeyError) throw new UsageError(`--sign-key ${file}: ${error.message}`);
    throw error;
  }
}

/** The real path of `target`: its nearest existing folder resolved (links followed), the rest as written. */
function realPathAsFarAsItExists(target: string): string {
  let existing = target;
  const rest: string[] = [];
  while (!existsSync(existing) && path.dirname(existing) !== existing) {
    rest.unshift(path.basename(existing));
    existing = path.dirname(existing);
  }
  try {
    return path.join(realpathSync(existing), ...rest);
  } catch {
    return target;
  }
}

/**
 * Rebuild on every change (cli/watch.ts): the diagnostics first, then the outputs when there is no
 * error and the warnings are within --max-warnings; a failed build leaves the last outputs as they are.
 */
async function watchAndBuild(settings: BuildSettings, context: CliContext): Promise<number> {
  // Loaded here: it loads the compiler, which a rebuild answered from the build cache does not need.
  const { describeCompile, watchRegistry } = await import('../watch.js');
  let warned: string | undefined;
  return watchRegistry(
    settings.root,
    {
      command: 'capreg build',
      cache: settings.cache,
      jobs: settings.jobs,
      onCompile: async (compiled, watchContext, elapsedMs) => {
        const { result } = compiled;
        watchContext.stdout(settings.formatter(result));
        watchContext.stderr(`capreg build: ${describeCompile(compiled, elapsedMs)}\n`);
        const code = exitCodeFor(result.errorCount, result.warningCount, settings.maxWarnings);
        if (code !== 0) {
          watchContext.stderr(`capreg build: ${result.errorCount > 0 ? `${result.errorCount} error(s)` : 'too many warnings'}; nothing written\n`);
          return;
        }
        // The commit can change between rebuilds.
        const now = await gitSource(settings.root);
        // Said once until it changes, not at every rebuild.
        if (now.problem !== undefined && now.problem !== warned) watchContext.stderr(sourceWarning('capreg build', now.problem));
        warned = now.problem;
        await writeBuild(settings, watchContext, result, now.source);
      },
    },
    context,
  );
}
