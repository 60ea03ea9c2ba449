/**
 * Runs a named fault scenario in-process on the running local stack, on the same code path as
 * `npm start -- --scenario NAME` (local/demo/run-scenario.ts), and returns its report.
 */

import type { RunReport } from '../../local/demo/report.js';
import { type RunScenarioOptions, runScenario } from '../../local/demo/run-scenario.js';
import { scenarioNamed } from '../../local/demo/scenarios/index.js';

/**
 * @throws Error when no scenario has that name.
 */
export async function runNamedScenario(name: string, options: RunScenarioOptions = {}): Promise<RunReport> {
  const scenario = scenarioNamed(name);
  if (!scenario) throw new Error(`no scenario named ${name}`);
  return runScenario(scenario, { retryIntervalMs: 100, ...options });
}
