/* gmime-autoptr.h - g_autoptr() cleanups for GMime types (GMime 3.2
 * declares none of its own); header-only, so that any module may use
 * them without including another module's header. */
#ifndef VULNID_GMIME_AUTOPTR_H
#define VULNID_GMIME_AUTOPTR_H

#include <glib.h>
#include <gmime/gmime.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeStream, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeParser, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeMessage, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeParserOptions, g_mime_parser_options_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeFormatOptions, g_mime_format_options_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GMimeCryptoContext, g_object_unref)

#endif
