// vitest setupFiles: every fast-check property of a test file runs from PROPERTY_SEED (see property.ts).
import fc from 'fast-check';
import { PROPERTY_SEED } from './property.js';

if (PROPERTY_SEED !== undefined) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: PROPERTY_SEED });
