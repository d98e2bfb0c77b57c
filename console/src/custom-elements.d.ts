import type { HTMLAttributes } from 'preact';

// model-viewer's custom element, as the console uses it (components/media.tsx).
declare module 'preact' {
  namespace JSX {
    interface IntrinsicElements {
      'model-viewer': HTMLAttributes<HTMLElement> & {
        src: string;
        poster?: string | undefined;
        alt: string;
        'camera-controls'?: boolean;
        'auto-rotate'?: boolean;
        'shadow-intensity'?: string;
      };
    }
  }
}
