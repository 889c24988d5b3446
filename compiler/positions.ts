// Offset <-> line/column mapping for one text. Lines and columns are 1-based, like editors show them.
import type { Range } from './types.js';

export class LineIndex {
  private starts: number[] | undefined;

  constructor(
    readonly text: string,
    /** Line number (1-based) of the first line of `text` in the file it came from. */
    readonly firstLine = 1,
    /** Column (1-based) of the first character of `text` on its first line. */
    private readonly firstColumn = 1,
  ) {}

  /** Offsets at which lines start; computed on first use (many texts never need a position). */
  private get lineStarts(): number[] {
    if (!this.starts) {
      this.starts = [0];
      for (let i = 0; i < this.text.length; i += 1) if (this.text.charCodeAt(i) === 10) this.starts.push(i + 1);
    }
    return this.starts;
  }

  point(offset: number): { line: number; column: number } {
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((this.lineStarts[mid] ?? 0) <= offset) low = mid;
      else high = mid - 1;
    }
    const column = offset - (this.lineStarts[low] ?? 0) + 1;
    return { line: this.firstLine + low, column: low === 0 ? column + this.firstColumn - 1 : column };
  }

  range(start: number, end: number): Range {
    const a = this.point(start);
    const b = this.point(Math.max(start, end));
    return { line: a.line, column: a.column, endLine: b.line, endColumn: b.column };
  }

  /** Offset of a file position, clamped to its line; undefined when the line is not in the text. */
  offsetAt(line: number, column: number): number | undefined {
    const index = line - this.firstLine;
    const start = this.lineStarts[index];
    if (start === undefined) return undefined;
    const next = this.lineStarts[index + 1];
    const lineEnd = next === undefined ? this.text.length : next - 1;
    const first = index === 0 ? this.firstColumn : 1;
    return Math.min(start + Math.max(column - first + 1, 1) - 1, lineEnd);
  }

  /** Offsets of a file range inside the text, or undefined when it starts outside it. */
  offsets(range: Range): { start: number; end: number } | undefined {
    const start = this.offsetAt(range.line, range.column);
    if (start === undefined) return undefined;
    const end = this.offsetAt(range.endLine, range.endColumn) ?? this.text.length;
    return { start, end: Math.max(start, end) };
  }
}

export function pointRange(line: number, column: number): Range {
  return { line, column, endLine: line, endColumn: column };
}

export const FILE_START: Range = pointRange(1, 1);
