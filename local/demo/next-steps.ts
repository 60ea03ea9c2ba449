/**
 * The end of `npm start`'s story: a short "what to do next" with the `dlq` commands that look at
 * the incident the run left behind.
 */

/** The short "what to do next" at the end of a run: the dlq commands to look at the incident. */
export function nextSteps(incidentId: string | null, shared: boolean): string {
  const id = incidentId ?? '<incident>';
  const rows: Array<[string, string]> = [
    [`npx dlq show ${id}`, 'what failed, since when, deadlines, runs, who approved'],
    [`npx dlq envelopes ${id} --export ${id}.jsonl`, 'every message with its exact body (holds payloads)'],
    [`npx dlq redrive ${id} --dry-run`, 'the plan a new redrive would follow, and where it would be refused'],
    ['npx dlq incidents', 'every incident on this stack'],
  ];
  const width = Math.max(...rows.map(([command]) => command.length));
  const commands = rows.map(([command, what]) => `  ${command.padEnd(width)}  ${what}`);
  return shared
    ? ['What next (this stack stays up under npm run local):', ...commands].join('\n')
    : [
        "What next: this run's local stack is gone now. To keep the incident for the dlq commands, run",
        '`npm run local` in another shell, paste the variables it prints here, run `npm start` again, then:',
        ...commands,
      ].join('\n');
}
