import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** One axe-core rule a page breaks, as the specs report it. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core (WCAG 2.0/2.1 A and AA rules and best practices) in the page as it is now and
 * answers its serious and critical violations: the dashboard must have none.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol: the dashboard's CSP forbids inline scripts.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (...args: unknown[]) => Promise<any> } })
      .axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, {
      runOnly: {
        type: 'tag',
        values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'],
      },
      resultTypes: ['violations'],
    });
    return (result.violations as any[]).map((v) => ({
      id: String(v.id),
      impact: v.impact ?? null,
      help: String(v.help),
      targets: (v.nodes as any[]).slice(0, 5).map((n) => String(n.target)),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
