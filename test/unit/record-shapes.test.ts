/** readShape / shapeOf (functions/shared/platform/record-shapes.ts): which versions a reader accepts. */
import { describe, expect, it } from 'vitest';
import { UnknownShapeVersionError } from '#platform/errors.js';
import { readShape, recordFields, SHAPE_VERSIONS, shapeOf } from '#platform/record-shapes.js';

describe('record shape versions', () => {
  it('writes the current version of the kind', () => {
    expect(shapeOf('ledger-entry')).toEqual({ shapeVersion: SHAPE_VERSIONS['ledger-entry'] });
  });

  it('reads the current version and a record with none (written before versions) the same way, without the attribute', () => {
    expect(readShape('incident', { incidentId: 'inc-1', shapeVersion: 1 }, 'incident inc-1')).toEqual({
      incidentId: 'inc-1',
    });
    expect(readShape('incident', { incidentId: 'inc-1' }, 'incident inc-1')).toEqual({ incidentId: 'inc-1' });
  });

  it.each([[2], [0], [-1], [1.5], ['1'], [null]])(
    'refuses shapeVersion %j by name, naming the record',
    (version) => {
      const error = (() => {
        try {
          readShape('approval', { approvalId: 'apr-1', shapeVersion: version }, 'approval apr-1');
        } catch (e) {
          return e;
        }
      })() as UnknownShapeVersionError;
      expect(error).toBeInstanceOf(UnknownShapeVersionError);
      expect(error.name).toBe('Redrive.UnknownShapeVersion');
      expect([error.kind, error.found]).toEqual(['approval', version]);
      expect(error.message).toContain(`approval apr-1 has shapeVersion ${JSON.stringify(version)}`);
    },
  );

  it("gives a stored record's own fields, without the table's keys, index keys, item family or shape version", () => {
    const item = {
      pk: 'INCIDENT#inc-1',
      sk: 'INCIDENT',
      gsi1pk: 'INCIDENTS',
      gsi1sk: '2026-12-01T10:00:00.000Z',
      entity: 'incident',
      shapeVersion: 1,
      incidentId: 'inc-1',
      status: 'OPEN',
    };
    expect(recordFields('incident', item, 'incident inc-1')).toEqual({ incidentId: 'inc-1', status: 'OPEN' });
    expect(() => recordFields('incident', { ...item, shapeVersion: 99 }, 'incident inc-1')).toThrow(
      UnknownShapeVersionError,
    );
  });
});
