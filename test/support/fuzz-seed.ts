/**
 * One seed for every fast-check property without its own: CI runs the same cases every time, and a
 * failure reproduces. FLOW_FUZZ_SEED explores others (a property that names a seed keeps it).
 */
import fc from 'fast-check';

fc.configureGlobal({ seed: Number(process.env.FLOW_FUZZ_SEED ?? 20_261_124) });
