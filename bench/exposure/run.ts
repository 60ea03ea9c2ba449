/**
 * Exposure benchmark (`npm run bench:exposure`): runs the `consumer-breaks-during-ramp` fault
 * scenario on the local stack (the real triage handler, ASL and task handlers) and prints, for
 * that one run, the messages the broken consumer received after their stay in the DLQ (`exposed`)
 * against the bound the ramp policy stated (the rates in force over the return window), and
 * against what a redrive with no gate would have exposed, as ratios. exposed / bound at most 1 is
 * the guarantee; near 1 the bound is tight; bound / gate-less below 1 means the bound says more
 * than "everything". Timing depends on the machine; compare ratios, not absolute counts.
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
    const ratio = (a: number, b: number | undefined) =>
      b !== undefined && b > 0 ? (a / b).toFixed(2) : 'n/a';
    const gateless = report.gatelessExposure;
    process.stdout.write(
      `${[
        `scenario            ${report.scenario} (${report.outcome}${report.asExpected ? ', as expected' : `, NOT as expected: ${report.problems.join('; ')}`})`,
        `moved by the ramp   ${report.bulkMoved} of ${report.inventoried - report.parked - report.sampled - report.returned}`,
        `exposed             ${report.exposed} message(s)`,
        `exposure bound      ${report.exposureBound} = ${report.exposureBoundBasis}`,
        `gate-less exposure  ${gateless ? `${gateless.value} = ${gateless.basis}` : 'n/a'}`,
        `exposed / bound     ${ratio(report.exposed, report.exposureBound)}`,
        `exposed / gate-less ${ratio(report.exposed, gateless?.value)}`,
        `bound / gate-less   ${ratio(report.exposureBound, gateless?.value)}`,
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
