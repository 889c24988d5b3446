// state-machine: TODO(rule author) — replace this placeholder with the rule (see SPEC §3).
import type { Rule } from '../rule.js';

export const stateMachine: Rule = {
  meta: {
    id: 'state-machine',
    description: 'TODO',
    defaultLevel: 'error',
    defaultOptions: {},
    messages: {},
  },
  check() {},
};
