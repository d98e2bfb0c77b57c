import sharp from 'sharp';
import { lumaOf } from '../image/pixels.js';
import type { RawImage } from '../image/pixels.js';
import type { PaletteColour } from './style-palette.js';

/**
 * A trained style's cover: the training images as a mosaic above a band of the style's palette,
 * each colour as wide as its weight, dark to light. What the style was made from and what it
 * will bring, at a glance.
 */

export const COVER_SIZE = 1024;
const BAND_HEIGHT = 192;
/** The mosaic shows the first images only; a 3 x 3 grid keeps each one recognisable. */
const MAX_TILES = 9;

export async function composeCover(images: readonly RawImage[], palette: readonly PaletteColour[]): Promise<RawImage> {
  const size = COVER_SIZE;
  const canvas = Buffer.alloc(size * size * 3);
  const tiles = images.slice(0, MAX_TILES);
  const cols = Math.ceil(Math.sqrt(tiles.length));
  const rows = Math.ceil(tiles.length / cols);
  const mosaicHeight = size - BAND_HEIGHT;
  for (const [k, img] of tiles.entries()) {
    const [col, row] = [k % cols, Math.floor(k / cols)];
    // The last row's tiles share its width among themselves, so no cell is left empty.
    const inRow = row === rows - 1 ? tiles.length - row * cols : cols;
    const x0 = Math.round((col * size) / inRow);
    const x1 = Math.round(((col + 1) * size) / inRow);
    const y0 = Math.round((row * mosaicHeight) / rows);
    const y1 = Math.round(((row + 1) * mosaicHeight) / rows);
    const tile = await sharp(img.data, { raw: { width: img.width, height: img.height, channels: 3 } })
      .resize(x1 - x0, y1 - y0, { fit: 'cover' })
      .raw()
      .toBuffer();
    for (let y = 0; y < y1 - y0; y++) tile.copy(canvas, ((y0 + y) * size + x0) * 3, y * (x1 - x0) * 3, (y + 1) * (x1 - x0) * 3);
  }
  paintBand(canvas, size, mosaicHeight, palette);
  return { data: canvas, width: size, height: size };
}

function paintBand(canvas: Buffer, size: number, top: number, palette: readonly PaletteColour[]): void {
  const ordered = [...palette].sort((a, b) => lumaOf(...a.rgb) - lumaOf(...b.rgb));
  const total = ordered.reduce((s, c) => s + c.weight, 0) || 1;
  let from = 0;
  let acc = 0;
  for (const colour of ordered) {
    acc += colour.weight;
    const to = Math.round((acc / total) * size);
    for (let y = top; y < size; y++) {
      for (let x = from; x < to; x++) canvas.set(colour.rgb, (y * size + x) * 3);
    }
    from = to;
  }
}
