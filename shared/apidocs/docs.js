// The API reference page's own script (served as docs/docs.js, beside
// Swagger UI's bundle; the page's Content-Security-Policy allows no inline
// script). It starts Swagger UI on the OpenAPI document served beside the
// page and points "try it" at the service that served the page.
//
// The page is <base>/docs and the document <base>/openapi.yaml, where
// <base> is the service's own base: the origin alone for vinsvc, the
// origin and ROOT_PATH for patentsvc, or whatever path a proxy puts in
// front of either. The document's `servers` name a local process and
// deployments; here the one server is <base>, computed from the page's
// own address, so "try it" calls the very service the page came from and
// nothing else (the Content-Security-Policy's connect-src 'self' would
// refuse another origin anyway). The document itself is served unchanged.
(function () {
  "use strict";

  var page = new URL(window.location.href);
  var base = page.origin + page.pathname.replace(/\/docs\/?$/, "");

  // thisService replaces the document's servers with <base> as the
  // document reaches Swagger UI's state (updateJsonSpec receives the
  // parsed document).
  function thisService() {
    return {
      statePlugins: {
        spec: {
          wrapActions: {
            updateJsonSpec: function (next) {
              return function (spec) {
                if (spec && typeof spec === "object") {
                  spec = Object.assign({}, spec, {
                    servers: [{ url: base, description: "This service (the address this page was loaded from)" }],
                  });
                }
                return next(spec);
              };
            },
          },
        },
      },
    };
  }

  window.ui = SwaggerUIBundle({
    url: base + "/openapi.yaml",
    dom_id: "#swagger-ui",
    layout: "BaseLayout",
    presets: [SwaggerUIBundle.presets.apis],
    plugins: [thisService],
    deepLinking: true,
    displayRequestDuration: true,
    // No badge from validator.swagger.io: nothing is loaded from another
    // origin.
    validatorUrl: null,
    // The page's own address never chooses the document (?url=...).
    queryConfigEnabled: false,
    // Secrets typed into Authorize live in the page only, never in
    // localStorage.
    persistAuthorization: false,
  });
})();
