/**
 * CloudFormation intrinsic functions (in long form, as parseServerlessYaml gives them), resolved against
 * the locally provisioned resources: resource properties in provision.ts, provider.environment in
 * runtime.ts.
 */
import { isPlainObject } from '../../core/plain-object';

/** The local account: the default AWS::AccountId here and `${aws:accountId}` in serverless.yml. */
export const LOCAL_ACCOUNT_ID = '000000000000';

const DEFAULT_PSEUDO: Record<string, string> = {
  'AWS::Partition': 'aws',
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::AccountId': LOCAL_ACCOUNT_ID,
};

/**
 * Resolves Ref, Fn::GetAtt, Fn::Sub (`${Res}`, `${Res.Attr}`, `${AWS::Region}`, `${!Literal}` and the
 * variable map form), Fn::Join, Fn::Select and Fn::Split, recursively, into strings (Fn::Split into
 * a list). Other intrinsics (Fn::If, ...) are kept, with their arguments resolved. Pseudo parameters
 * come from `resolver.pseudo`; AWS::Partition, AWS::URLSuffix and AWS::AccountId have local defaults.
 */
export function resolveIntrinsics(
  value: unknown,
  resolver: { ref(logicalId: string): string; getAtt(logicalId: string, attribute: string): string; pseudo?: Record<string, string> },
): unknown {
  const pseudo = { ...DEFAULT_PSEUDO, ...(resolver.pseudo ?? {}) };

  const ref = (name: unknown): string => {
    if (typeof name !== 'string') throw new Error(`Ref expects a logical id, got ${JSON.stringify(name)}`);
    if (name.startsWith('AWS::')) {
      const pseudoValue = pseudo[name];
      if (pseudoValue === undefined) throw new Error(`No value for the pseudo parameter ${name}`);
      return pseudoValue;
    }
    return resolver.ref(name);
  };

  const str = (input: unknown, what: string): string => {
    const resolved = walk(input);
    if (typeof resolved === 'string') return resolved;
    if (typeof resolved === 'number' || typeof resolved === 'boolean') return String(resolved);
    throw new Error(`${what} expects a string, got ${JSON.stringify(resolved)}`);
  };

  const list = (input: unknown, what: string): unknown[] => {
    const resolved = walk(input);
    if (!Array.isArray(resolved)) throw new Error(`${what} expects a list, got ${JSON.stringify(resolved)}`);
    return resolved;
  };

  const sub = (template: string, variables: Record<string, unknown>): string =>
    template.replace(/\$\{([^}]*)\}/g, (whole, inner: string) => {
      const name = inner.trim();
      if (name.startsWith('!')) return `\${${name.slice(1)}}`;
      if (Object.hasOwn(variables, name)) return str(variables[name], `Fn::Sub variable ${name}`);
      if (name.startsWith('AWS::')) return ref(name);
      const dot = name.indexOf('.');
      if (dot > 0) return resolver.getAtt(name.slice(0, dot), name.slice(dot + 1));
      if (name) return resolver.ref(name);
      return whole;
    });

  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!isPlainObject(node)) return node;
    const keys = Object.keys(node);
    if (keys.length === 1) {
      const [key] = keys;
      const arg = node[key];
      switch (key) {
        case 'Ref':
          return ref(walk(arg));
        case 'Fn::GetAtt': {
          const parts = typeof arg === 'string' ? splitAttribute(arg) : list(arg, 'Fn::GetAtt');
          if (parts.length !== 2) throw new Error(`Fn::GetAtt expects [LogicalId, Attribute], got ${JSON.stringify(arg)}`);
          return resolver.getAtt(str(parts[0], 'Fn::GetAtt'), str(parts[1], 'Fn::GetAtt'));
        }
        case 'Fn::Sub': {
          if (typeof arg === 'string') return sub(arg, {});
          const [template, variables] = list(arg, 'Fn::Sub');
          if (typeof template !== 'string') throw new Error('Fn::Sub expects a template string');
          return sub(template, isPlainObject(variables) ? variables : {});
        }
        case 'Fn::Join': {
          const [delimiter, items] = list(arg, 'Fn::Join');
          return list(items, 'Fn::Join')
            .map((item) => str(item, 'Fn::Join'))
            .join(str(delimiter, 'Fn::Join'));
        }
        case 'Fn::Select': {
          const [index, items] = list(arg, 'Fn::Select');
          const position = Number(walk(index));
          const selected = list(items, 'Fn::Select');
          if (!Number.isInteger(position) || position < 0 || position >= selected.length) {
            throw new Error(`Fn::Select index ${String(index)} is out of range`);
          }
          return selected[position];
        }
        case 'Fn::Split': {
          const [delimiter, source] = list(arg, 'Fn::Split');
          return str(source, 'Fn::Split').split(str(delimiter, 'Fn::Split'));
        }
        default:
          break;
      }
    }
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(node)) out[key] = walk(item);
    return out;
  };

  return walk(value);
}

function splitAttribute(value: string): string[] {
  const dot = value.indexOf('.');
  return dot > 0 ? [value.slice(0, dot), value.slice(dot + 1)] : [value];
}
