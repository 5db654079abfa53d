/**
 * Checks a CloudFormation template's resources against AWS's resource specification as the AWS CDK
 * publishes it on npm (`@aws-cdk/aws-service-spec`: every resource type's properties, which are
 * required, their types and, where the registry schema lists them, their allowed values). What it
 * finds: unknown resource types, unknown properties, missing required ones, values of the wrong
 * type, and string values outside the allowed ones. Intrinsic functions (`Ref`, `Fn::*`) stand for
 * a value only known at deploy time and are accepted wherever a value is.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

/** A type as the specification writes it. */
type SpecType =
  | { type: 'string'; allowedValues?: string[] }
  | { type: 'number' | 'integer' | 'boolean' | 'json' | 'date-time' | 'null' | 'tag' }
  | { type: 'array' | 'map'; element: SpecType }
  | { type: 'ref'; reference: { $ref: string } }
  | { type: 'union'; types: SpecType[] };

interface SpecProperty {
  type: SpecType;
  required?: boolean;
}

interface TypeDefinition {
  name: string;
  properties: Record<string, SpecProperty>;
}

interface ResourceSpec {
  cloudFormationType: string;
  properties: Record<string, SpecProperty>;
}

export interface ResourceSpecification {
  resource(type: string): ResourceSpec | undefined;
  typeDefinition(id: string): TypeDefinition | undefined;
}

/** The specification database shipped with the package, read once. */
export function loadResourceSpecification(): ResourceSpecification {
  const packageJson = createRequire(import.meta.url).resolve('@aws-cdk/aws-service-spec/package.json');
  const db = JSON.parse(gunzipSync(readFileSync(path.join(path.dirname(packageJson), 'db.json.gz'))).toString('utf8'));
  const resources = new Map<string, ResourceSpec>();
  for (const entity of Object.values(db.schema.resource.entities) as ResourceSpec[]) resources.set(entity.cloudFormationType, entity);
  // References name a definition by its `$id`, which is not its key in the entity table.
  const definitions = new Map<string, TypeDefinition>();
  for (const entity of Object.values(db.schema.typeDefinition.entities) as Array<TypeDefinition & { $id: string }>) definitions.set(entity.$id, entity);
  return { resource: (type) => resources.get(type), typeDefinition: (id) => definitions.get(id) };
}

/** An object that is one intrinsic function call: `{ "Ref": … }` or `{ "Fn::…": … }`. */
function isIntrinsic(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && (keys[0] === 'Ref' || keys[0]!.startsWith('Fn::') || keys[0] === 'Condition');
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Resource types the specification does not describe because they are not AWS's: custom resources. */
const notAws = (type: string) => type.startsWith('Custom::') || type === 'AWS::CloudFormation::CustomResource';

/** Every problem found, each naming the resource and the property path. */
export function checkTemplate(
  template: { Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }> },
  spec: ResourceSpecification,
): string[] {
  const problems: string[] = [];
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (notAws(resource.Type)) continue;
    const described = spec.resource(resource.Type);
    if (!described) {
      problems.push(`${logicalId}: unknown resource type ${resource.Type}`);
      continue;
    }
    checkProperties(`${logicalId} (${resource.Type})`, resource.Properties ?? {}, described.properties, spec, problems);
  }
  return problems;
}

function checkProperties(
  at: string,
  values: Record<string, unknown>,
  properties: Record<string, SpecProperty>,
  spec: ResourceSpecification,
  problems: string[],
): void {
  for (const [name, property] of Object.entries(properties)) {
    if (property.required && values[name] === undefined) problems.push(`${at}: required property ${name} is missing`);
  }
  for (const [name, value] of Object.entries(values)) {
    const property = properties[name];
    if (!property) {
      problems.push(`${at}: unknown property ${name}`);
      continue;
    }
    checkValue(`${at}.${name}`, value, property.type, spec, problems);
  }
}

function checkValue(at: string, value: unknown, type: SpecType, spec: ResourceSpecification, problems: string[]): void {
  if (isIntrinsic(value)) return;
  const wrong = (expected: string): void => {
    problems.push(`${at}: expected ${expected}, got ${JSON.stringify(value)?.slice(0, 80)}`);
  };
  switch (type.type) {
    case 'string':
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return wrong('a string');
      if (type.allowedValues && !type.allowedValues.includes(String(value))) wrong(`one of ${type.allowedValues.join(', ')}`);
      return;
    case 'number':
    case 'integer':
      // CloudFormation takes numbers written as strings as well.
      if (typeof value === 'number' || (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))) return;
      return wrong(`a ${type.type}`);
    case 'boolean':
      if (typeof value === 'boolean' || value === 'true' || value === 'false') return;
      return wrong('a boolean');
    case 'date-time':
      if (typeof value !== 'string') wrong('a date-time string');
      return;
    case 'json':
    case 'null':
      return;
    case 'tag':
      if (!isPlainObject(value) || value.Key === undefined || value.Value === undefined) wrong('a tag {Key, Value}');
      return;
    case 'array':
      if (!Array.isArray(value)) return wrong('a list');
      value.forEach((element, index) => checkValue(`${at}[${index}]`, element, type.element, spec, problems));
      return;
    case 'map':
      if (!isPlainObject(value)) return wrong('a map');
      for (const [key, element] of Object.entries(value)) checkValue(`${at}.${key}`, element, type.element, spec, problems);
      return;
    case 'ref': {
      const definition = spec.typeDefinition(type.reference.$ref);
      if (!definition) return;
      if (!isPlainObject(value)) return wrong(`an object (${definition.name})`);
      checkProperties(at, value, definition.properties, spec, problems);
      return;
    }
    case 'union': {
      // The value must be right for one of the types: each is tried on its own.
      for (const option of type.types) {
        const found: string[] = [];
        checkValue(at, value, option, spec, found);
        if (found.length === 0) return;
      }
      return wrong(`one of ${type.types.map((option) => option.type).join(' | ')}`);
    }
  }
}
