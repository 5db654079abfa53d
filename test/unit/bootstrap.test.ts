import { describe, expect, it } from 'vitest';
import { ensureBootstrap } from '../../lib/auth/bootstrap';

describe('ensureBootstrap', () => {
  it('refuses a GATEWAY_ADMIN_KEY that a request could not present, before touching the store', async () => {
    await expect(ensureBootstrap({ adminKey: `gwk_${'a'.repeat(253)}` })).rejects.toThrow('GATEWAY_ADMIN_KEY must be 20 to 256 characters long.');
    await expect(ensureBootstrap({ adminKey: 'gwk_too_short' })).rejects.toThrow('GATEWAY_ADMIN_KEY must be 20 to 256 characters long.');
  });
});
