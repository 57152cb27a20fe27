"""One package per page, named by its URL path; a page's package imports the shared layers, never another page's."""
