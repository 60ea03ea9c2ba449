import { describe, expect, it } from 'vitest';
import { redriveInput } from '../../cli/commands/runs.js';
import { CliError } from '../../cli/output.js';

const incident = { incidentId: 'inc-1', dlqArn: 'arn:aws:sqs:us-east-1:111122223333:orders-dlq' };

describe('dlq unpark input', () => {
  it('sends unpark: true with the selection, the incident and who asks', () => {
    expect(redriveInput(incident, { unpark: true, cause: ['ValidationError'] }, 'ana')).toEqual({
      dlqArn: incident.dlqArn,
      incidentId: 'inc-1',
      requestedBy: 'ana',
      selection: { causes: ['ValidationError'] },
      unpark: true,
    });
  });

  it('refuses --discard-poison on an un-park run with exit code 2, naming the flag', () => {
    let error: unknown;
    try {
      redriveInput(incident, { unpark: true, discardPoison: true }, 'ana');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CliError);
    expect([(error as CliError).exitCode, (error as CliError).message]).toEqual([
      2,
      '--discard-poison: does not apply to an un-park run (it parks and discards nothing: it sends parked messages back); omit it',
    ]);
  });
});
