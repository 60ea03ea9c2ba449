import { describe, expect, it } from 'vitest';
import { sharedUsers } from '../../scripts/check-shared-users.js';

const mod = (source: string, ...deps: string[]) => ({
  source,
  dependencies: deps.map((resolved) => ({ resolved })),
});

describe('the shared-file rule of docs/layout.md', () => {
  it('counts the function folders that reach a shared file, through other shared files too', () => {
    const users = sharedUsers([
      mod('functions/triage/handler.ts', 'functions/shared/inventory/inventory.ts'),
      mod('functions/reconcile/reconcile.ts', 'functions/shared/inventory/inventory.ts'),
      mod('functions/shared/inventory/inventory.ts', 'functions/shared/inventory/classification.ts'),
      mod('functions/shared/inventory/classification.ts'),
      mod('functions/park/park.ts', 'functions/shared/transfer/redrive-plan.ts'),
      mod('functions/shared/transfer/redrive-plan.ts'),
      mod('functions/shared/platform/unused.ts'),
    ]);
    expect([...(users.get('functions/shared/inventory/classification.ts') ?? [])].sort()).toEqual([
      'reconcile',
      'triage',
    ]);
    expect([...(users.get('functions/shared/transfer/redrive-plan.ts') ?? [])]).toEqual(['park']);
    expect(users.get('functions/shared/platform/unused.ts')?.size).toBe(0);
  });

  it('survives import cycles without looping', () => {
    const users = sharedUsers([
      mod('functions/notify/notify.ts', 'functions/shared/incident/a.ts'),
      mod('functions/shared/incident/a.ts', 'functions/shared/incident/b.ts'),
      mod('functions/shared/incident/b.ts', 'functions/shared/incident/a.ts'),
    ]);
    expect([...(users.get('functions/shared/incident/b.ts') ?? [])]).toEqual(['notify']);
  });

  it('counts the dlq CLI as a user beside the functions, so a schema ValidateInput and the CLI share stays shared', () => {
    const users = sharedUsers([
      mod('functions/validate-input/validate-input.ts', 'functions/shared/incident/execution-input.ts'),
      mod('cli/commands/runs.ts', 'functions/shared/incident/execution-input.ts'),
      mod('functions/shared/incident/execution-input.ts'),
      mod('local/main.ts', 'functions/shared/incident/execution-input.ts'),
    ]);
    expect([...(users.get('functions/shared/incident/execution-input.ts') ?? [])].sort()).toEqual([
      'cli',
      'validate-input',
    ]);
  });
});
