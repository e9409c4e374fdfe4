// cmake/windows/fmt_compiled.cc: fmt's out-of-line code, compiled once for the Windows
// cross-build (cmake/DlrtWindowsDeps.cmake).
//
// Debian ships fmt 9.1 as headers plus a compiled libfmt.so for Linux, but no mingw build. With
// FMT_HEADER_ONLY every translation unit that includes <fmt/format.h> also compiles
// format-inl.h (the float formatter, locale glue, vformat_to): measured on a 2-core EPYC
// with mingw g++ 12 -O3, 6.2 s for core/status.cc against 0.8 s without, and about 300 of the
// cross-build's ~370 objects include fmt. So the cross-build compiles the inline part here, once,
// into a static library, and the rest of the tree sees the ordinary (not header-only) fmt, whose
// format.h declares these symbols `extern template` / FMT_API.
//
// The list mirrors the explicit instantiations of fmt 9.1's own src/format.cc (char and
// wchar_t), which Debian's libfmt-dev does not ship as a source file.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

#ifndef FMT_STATIC_THOUSANDS_SEPARATOR
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
#endif

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

}  // namespace detail
FMT_END_NAMESPACE
