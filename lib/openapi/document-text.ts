import packageJson from '../../package.json';
import { openApiDocument } from './document';

/** docs/openapi.json as the script writes it and the test expects it, byte for byte. */
export function openApiText(): string {
  return `${JSON.stringify(openApiDocument(packageJson.version), null, 2)}\n`;
}
