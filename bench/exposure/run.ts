/**
 * Exposure benchmark (`npm run bench:exposure`): runs the `consumer-breaks-during-ramp` fault
 * scenario on the local stack (the real triage handler, ASL and task handlers) and prints, for
 * that one run, the messages the broken consumer received after their stay in the DLQ (`exposed`)
 * against the bound the health gate promises (rate x (return window + dwell) of the fastest step
 * after the break), as a ratio. Below 1 the guarantee held; the lower, the sooner the gate saw the
 * break. Timing depends on the machine; compare ratios, not absolute counts.
 *
 * Usage: npx tsx bench/exposure/run.ts [messages]
 */
import '../../local/demo/env.js';
import { runScenario } from '../../local/demo/run-scenario.js';
import { scenarioNamed } from '../../local/demo/scenarios/index.js';
import { startLocalStack } from '../../local/stack.js';

const SCENARIO = 'consumer-breaks-during-ramp';

async function main(): Promise<number> {
  const messages = process.argv[2] ? Number(process.argv[2]) : undefined;
  const scenario = scenarioNamed(SCENARIO);
  if (!scenario) throw new Error(`no scenario ${SCENARIO}`);
  const stack = await startLocalStack();
  try {
    const report = await runScenario(scenario, messages !== undefined ? { messages } : {});
    const ratio = report.exposureBound > 0 ? report.exposed / report.exposureBound : Number.NaN;
    process.stdout.write(
      `${[
        `scenario            ${report.scenario} (${report.outcome}${report.asExpected ? ', as expected' : `, NOT as expected: ${report.problems.join('; ')}`})`,
        `moved by the ramp   ${report.bulkMoved} of ${report.inventoried - report.parked - report.sampled - report.returned}`,
        `exposed             ${report.exposed} message(s)`,
        `exposure bound      ${report.exposureBound} = ${report.exposureBoundBasis}`,
        `exposed / bound     ${ratio.toFixed(2)}`,
        `duration            ${(report.durationMs / 1000).toFixed(1)} s`,
      ].join('\n')}\n`,
    );
    return report.asExpected ? 0 : 1;
  } finally {
    await stack.stop();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `bench:exposure failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
