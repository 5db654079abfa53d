import type { ServerlessRoute } from '../template/serverless-config';

/** A resource of the REST API: one path segment, its methods, and its children. */
interface ResourceNode {
  /** The resource path as API Gateway shows it, e.g. `/v1/{proxy+}`. */
  path: string;
  methods: Map<string, ServerlessRoute>;
  literals: Map<string, ResourceNode>;
  param?: { name: string; node: ResourceNode };
  greedy?: { name: string; node: ResourceNode };
}

export interface RouteMatch {
  /** The matched resource path (`event.resource`). */
  resource: string;
  /** Undefined when the resource exists but has no such method (API Gateway answers 403 then; we 404). */
  route?: ServerlessRoute;
  pathParameters: Record<string, string>;
}

/**
 * The REST API's resource tree, matched the way API Gateway does: at each level a literal segment
 * wins over `{param}`, which wins over `{proxy+}`; a resource that exists but lacks the method does
 * not fall through to a greedy sibling.
 */
export class RouteTable {
  private readonly root: ResourceNode = newNode('/');

  constructor(routes: readonly ServerlessRoute[]) {
    for (const route of routes) this.add(route);
  }

  private add(route: ServerlessRoute): void {
    let node = this.root;
    for (const segment of route.path.split('/').filter(Boolean)) {
      const path = node.path === '/' ? `/${segment}` : `${node.path}/${segment}`;
      const greedy = /^\{(.+)\+\}$/.exec(segment);
      const param = /^\{(.+)\}$/.exec(segment);
      if (greedy) node = (node.greedy ??= { name: greedy[1], node: newNode(path) }).node;
      else if (param) node = (node.param ??= { name: param[1], node: newNode(path) }).node;
      else {
        let child = node.literals.get(segment);
        if (!child) node.literals.set(segment, (child = newNode(path)));
        node = child;
      }
    }
    node.methods.set(route.method, route);
  }

  /** Finds the resource for a path (raw, percent-encoded) and the route for the method. */
  match(method: string, path: string): RouteMatch | undefined {
    const segments = path.split('/').filter(Boolean);
    const found = find(this.root, segments, 0, {});
    if (!found) return undefined;
    const route = found.node.methods.get(method) ?? found.node.methods.get('ANY');
    return { resource: found.node.path, route, pathParameters: found.params };
  }
}

function newNode(path: string): ResourceNode {
  return { path, methods: new Map(), literals: new Map() };
}

function find(
  node: ResourceNode,
  segments: string[],
  index: number,
  params: Record<string, string>,
): { node: ResourceNode; params: Record<string, string> } | undefined {
  if (index === segments.length) return node === undefined ? undefined : { node, params };
  const segment = segments[index];
  const literal = node.literals.get(segment);
  if (literal) {
    const found = find(literal, segments, index + 1, params);
    if (found) return found;
  }
  if (node.param) {
    const found = find(node.param.node, segments, index + 1, { ...params, [node.param.name]: decode(segment) });
    if (found) return found;
  }
  if (node.greedy) {
    return { node: node.greedy.node, params: { ...params, [node.greedy.name]: segments.slice(index).map(decode).join('/') } };
  }
  return undefined;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Whether a raw path holds a percent-escape that does not decode (`%` without two hex digits, or
 * escapes that are not UTF-8): API Gateway refuses such a request before routing it, so no path
 * parameter it hands a function is ever left undecoded.
 */
export function hasMalformedEscape(path: string): boolean {
  if (!path.includes('%')) return false;
  try {
    decodeURIComponent(path);
    return false;
  } catch {
    return true;
  }
}
