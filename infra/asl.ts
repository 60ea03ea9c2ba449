/**
 * Reading the deployed state machine definition: which `${...}` placeholders it holds (CDK's
 * definition substitutions must provide every one) and which Task resources it calls (the state
 * machine role must allow each).
 *
 * @see https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-stepfunctions-statemachine.html#cfn-stepfunctions-statemachine-definitionsubstitutions
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Absolute path of `statemachines/redrive.asl.json`. */
export const DEFAULT_DEFINITION_PATH = fileURLToPath(
  new URL('../statemachines/redrive.asl.json', import.meta.url),
);

/** The placeholder of the workflow alias's name: a continuation starts through the alias. */
export const ALIAS_PLACEHOLDER = 'WorkflowAliasName';
/** The alias every execution starts through unless the stack names another. */
export const DEFAULT_WORKFLOW_ALIAS = 'live';

/** Every distinct `${Name}` placeholder in a definition's text, sorted. */
export function aslPlaceholders(definitionText: string): string[] {
  const names = new Set<string>();
  for (const match of definitionText.matchAll(/\$\{([A-Za-z0-9_]+)\}/g)) {
    if (match[1] !== undefined) names.add(match[1]);
  }
  return [...names].sort();
}

/**
 * The substitutions for a definition: one value per placeholder it holds.
 *
 * @param definitionText - the ASL file's text.
 * @param available - values by placeholder name (more than the definition uses is fine).
 * @throws Error naming every placeholder without a value: deploying it would leave `${...}` in
 *   the definition, which Step Functions rejects as an invalid ARN.
 */
export function substitutionsFor(
  definitionText: string,
  available: Readonly<Record<string, string>>,
): Record<string, string> {
  const placeholders = aslPlaceholders(definitionText);
  const missing = placeholders.filter((name) => available[name] === undefined);
  if (missing.length > 0) {
    throw new Error(
      `statemachines/redrive.asl.json uses placeholder(s) with no value: ${missing.map((n) => `\${${n}}`).join(', ')}` +
        ` (provided: ${Object.keys(available).sort().join(', ') || 'none'})`,
    );
  }
  const out: Record<string, string> = {};
  for (const name of placeholders) out[name] = available[name] as string;
  return out;
}

/** Every `Resource` of a Task state, nested states (Parallel branches, Map processors) included. */
export function aslTaskResources(definition: unknown): string[] {
  const found = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    if (record.Type === 'Task' && typeof record.Resource === 'string') found.add(record.Resource);
    for (const value of Object.values(record)) visit(value);
  };
  visit(definition);
  return [...found].sort();
}

/** Reads a definition file as text. */
export function readDefinition(path: string = DEFAULT_DEFINITION_PATH): string {
  return readFileSync(path, 'utf8');
}
