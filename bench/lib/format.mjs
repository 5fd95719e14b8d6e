// Number formats and a Markdown table renderer, shared by every part.

/** 14_750_000 → '14.75 M', 845_400 → '845.4 k'. */
export function formatRate(value) {
  if (!Number.isFinite(value)) return 'n/a';
  if (value >= 1e6) return `${(value / 1e6).toFixed(2)} M`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(1)} k`;
  return value.toFixed(0);
}

/** `{ median, min, max }` → '0.942× [0.84–1.52]'. */
export function formatRatio(ratio) {
  if (!Number.isFinite(ratio.median)) return 'n/a';
  return `${ratio.median.toFixed(3)}× [${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)}]`;
}

export function formatPercent(value) {
  return Number.isFinite(value) ? `${Math.round(value * 100)}%` : 'n/a';
}

export function formatBytes(value) {
  if (!Number.isFinite(value)) return 'n/a';
  const rounded = Math.round(value);
  return String(rounded === 0 ? 0 : rounded); // never '-0'
}

/** 500_314 → '500.3 kB' (kB = 1000 bytes, as npm prints sizes). */
export function formatKilobytes(value) {
  return Number.isFinite(value) ? `${(value / 1_000).toFixed(1)} kB` : 'n/a';
}

/**
 * A Markdown table. `columns`: `{ title, align: 'left' | 'right' }[]`;
 * `rows`: arrays of cell strings. Cells are padded so the text reads as a
 * table in a terminal too.
 */
export function renderTable(columns, rows) {
  const widths = columns.map((c, i) => Math.max(width(c.title), 3, ...rows.map((r) => width(r[i] ?? ''))));
  const pad = (text, i) => {
    const fill = ' '.repeat(widths[i] - width(text));
    return columns[i].align === 'right' ? fill + text : text + fill;
  };
  const line = (cells) => `| ${cells.map(pad).join(' | ')} |`;
  const rule = `|${columns.map((c, i) => (c.align === 'right' ? `${'-'.repeat(widths[i] + 1)}:` : `:${'-'.repeat(widths[i] + 1)}`)).join('|')}|`;
  return [line(columns.map((c) => c.title)), rule, ...rows.map(line)].join('\n');
}

/** Display width: counts code points, so '×', '–' and '✓' take one column. */
function width(text) {
  return [...text].length;
}

/** `value` with `digits` decimals, or 'n/a' when it is not a finite number. */
export function formatFixed(value, digits) {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

/** 3.14 → '+3.1', -2 → '-2.0', 0 → '+0.0': a difference, always with its sign. */
export function formatSigned(value, digits = 1) {
  if (!Number.isFinite(value)) return 'n/a';
  const text = value.toFixed(digits);
  return value >= 0 && !text.startsWith('-') ? `+${text}` : text;
}

/** Whole milliseconds, or 'n/a'. */
export function formatMs(value) {
  return Number.isFinite(value) ? String(Math.round(value)) : 'n/a';
}
