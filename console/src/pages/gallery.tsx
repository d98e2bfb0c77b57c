import { PageTitle } from '../components/ui.js';

export function Gallery(props: { query: URLSearchParams }) {
  void props;
  return <PageTitle>Gallery</PageTitle>;
}
