// capreg keygen --out DIR: a new Ed25519 key pair for signing manifests. The private JWK goes to
// a file only its owner can read (CI's secret); the public JWKS goes to the servers
// (`serve --verify-key`). Existing files are never overwritten: a lost key is rotated, not clobbered.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateSigningKey } from '../../server/signature.js';
import { parseFlags } from '../command-table.js';
import { UsageError, type Command } from '../context.js';

export const PRIVATE_KEY_FILE = 'manifest-signing-key.jwk';
export const PUBLIC_JWKS_FILE = 'manifest-verify-keys.jwks.json';

export const keygenCommand: Command = async (argv, context) => {
  const { values } = parseFlags('keygen', argv);
  if (values.out === undefined) throw new UsageError('--out DIR is required: the folder to write the key pair to');
  const dir = path.resolve(context.cwd, values.out);
  const privateFile = path.join(dir, PRIVATE_KEY_FILE);
  const publicFile = path.join(dir, PUBLIC_JWKS_FILE);
  const { privateJwk, publicJwks, kid } = await generateSigningKey();
  try {
    await mkdir(dir, { recursive: true });
    // `wx`: refuse an existing file without a window in which it could be replaced; mode 0600 from
    // the first byte, so the private key is never readable by others.
    await writeFile(privateFile, `${JSON.stringify(privateJwk)}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new UsageError(`${privateFile} already exists; keygen never overwrites a key (pick another --out)`);
    throw new UsageError(`cannot write ${privateFile}: ${code ?? (error as Error).message}`);
  }
  try {
    await writeFile(publicFile, `${JSON.stringify(publicJwks, null, 2)}\n`, { flag: 'wx', mode: 0o644 });
  } catch (error) {
    // Half a key pair is of no use, and would block the next run.
    await rm(privateFile, { force: true });
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new UsageError(`${publicFile} already exists; keygen never overwrites a key (pick another --out)`);
    throw new UsageError(`cannot write ${publicFile}: ${code ?? (error as Error).message}`);
  }
  context.stdout(`kid ${kid}\n`);
  context.stderr(
    `capreg keygen: wrote ${privateFile} (private, mode 0600: give it to CI as a secret for \`capreg build --sign-key\`) and ${publicFile} (public: \`capreg serve --verify-key\`)\n`,
  );
  return 0;
};
