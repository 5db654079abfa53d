import { describe, expect, it } from 'vitest';
import { generateApiKeySecret, hintOf } from '../../lib/auth/api-keys';

describe('hintOf', () => {
  it('shows a generated key as gwk_ and its last 4 characters', () => {
    const secret = generateApiKeySecret();
    expect(hintOf(secret)).toBe(`gwk_…${secret.slice(-4)}`);
  });

  it('shows no more than the last 4 characters of an operator-chosen key, whatever it starts with', () => {
    for (const secret of ['gwk_test_admin_key_for_the_shared_gateway_0001', 'operator-chosen-key-with-a-secret-prefix', `gwk_${'a'.repeat(200)}wxyz`]) {
      expect(hintOf(secret), secret).toBe(`…${secret.slice(-4)}`);
    }
  });
});
