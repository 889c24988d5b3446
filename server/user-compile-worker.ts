// A user-capability compile worker (see user-compile-pool.ts): loads the compiler, says when it is
// ready, keeps the catalog stand-ins it is sent (once per manifest), and compiles each save against
// the capabilities the author can see, or renders a stored revision's protocol. A compile that
// throws is reported with its message.
import { parentPort, workerData } from 'node:worker_threads';
import type { AnyRule } from '../compiler/rule.js';
import { compileUserCapability, renderStoredProtocol, visibleCatalog } from '../compiler/user/compile-user.js';
import { loadTokenizer } from '../compiler/tokens.js';
import type { FromWorker, ToWorker } from './user-compile-pool.js';

const port = parentPort;
if (port) {
  const { testRulesModule } = workerData as { testRulesModule?: string };
  const extraRules = testRulesModule ? ((await import(testRulesModule)) as { rules: readonly AnyRule[] }).rules : undefined;
  let catalog: Extract<ToWorker, { type: 'catalog' }> | undefined;
  port.on('message', (message: ToWorker) => {
    if (message.type === 'catalog') {
      catalog = message;
      return;
    }
    try {
      if (message.type === 'render') {
        const protocol = renderStoredProtocol(message.markdown, message.protocolTool);
        port.postMessage({ type: 'rendered', job: message.job, protocol } satisfies FromWorker);
        return;
      }
      if (catalog?.key !== message.key) throw new Error('no catalog for this manifest');
      const visible = new Set(message.visible);
      const result = compileUserCapability(
        message.markdown,
        visibleCatalog(catalog, (id) => visible.has(id)),
        {
          maxBytes: message.maxBytes,
          protocolTool: message.protocolTool,
          ...(catalog.settings ? { settings: catalog.settings } : {}),
          ...(extraRules ? { extraRules } : {}),
        },
      );
      port.postMessage({ type: 'compiled', job: message.job, result } satisfies FromWorker);
    } catch (error) {
      port.postMessage({ type: 'failed', job: message.job, message: error instanceof Error ? error.message : String(error) } satisfies FromWorker);
    }
  });
  // The tokenizer loads with the first count (compiler/tokens.ts): load it before saying ready, so
  // that the first save's budget is not spent on its tables (~0.5 s).
  loadTokenizer();
  port.postMessage({ type: 'ready' } satisfies FromWorker);
}
