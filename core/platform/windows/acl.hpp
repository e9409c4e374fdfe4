// windows/acl.hpp: the plugin search's permission rule in Windows terms (docs/windows.md).
//
// On POSIX a plugin, its folder and every folder above it must not be group- or world-
// writable (plugin_search.hpp). On Windows "anyone" is one of three well-known groups that
// every local user is in: Everyone (S-1-1-0), Users (S-1-5-32-545) and Authenticated Users
// (S-1-5-11). A DACL entry that allows one of them a right that lets them change what gets
// loaded refuses the plugin, and the reason names that entry. Which rights count depends on
// what the object is:
//   the plugin file      writing, appending, deleting (replace by rename), changing its DACL or
//                        owner;
//   the plugin's folder  adding a file (a second libdlrt-*.dll the scan would load, or a DLL
//                        the plugin imports: LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR looks there),
//                        deleting or renaming its entries, changing its DACL or owner;
//   a folder above it    what lets one rename the path away: deleting or renaming its
//                        entries (FILE_DELETE_CHILD), deleting it, changing its DACL or owner.
//                        Creating new entries does not (C:\ allows Authenticated Users to
//                        create folders, and that is safe), the way a sticky /tmp is safe.
// GENERIC_WRITE and GENERIC_ALL count as all of these. Inherit-only entries do not apply to
// the object itself and are skipped; a NULL DACL grants everyone everything and is refused.
// Deny entries are not weighed against allow entries: an allow entry to those groups is
// refused even when a deny entry before it would win (a plugin folder has no business with
// either).
#pragma once

#include <windows.h>

#include <string>

namespace dlrt::core::platform::win {

enum class AclObject { kPluginFile, kPluginFolder, kAncestorFolder };

// "" when no entry of `dacl` gives the three groups such a right; otherwise the reason,
// naming `path`, the entry (its group, SID, and rights) and what is expected. `dacl` may be
// NULL (no DACL: everyone has full access).
std::string acl_write_problem(const ACL* dacl, AclObject what, const std::string& path);

// The same for a security descriptor written in SDDL ("D:(A;;FA;;;WD)"), so the walk can be
// tested on any ACL without making files with it. A malformed SDDL is a problem too.
std::string sddl_write_problem(const std::string& sddl, AclObject what, const std::string& path);

// The owner rule, POSIX's "owned by this user or root" in Windows terms: a plugin file and its
// folder must be owned by `me` (the user running the program) or by one of the system's own
// accounts: SYSTEM (S-1-5-18), Administrators (S-1-5-32-544) or TrustedInstaller (what
// installs Windows' own files). An owner may always rewrite the DACL (owners hold WRITE_DAC
// implicitly), so no DACL check stands in for this one. "" when the owner is one of those;
// otherwise the reason, naming `path`, the owner's SID and what is expected. `owner` may be
// NULL (a descriptor without an owner): refused.
std::string owner_problem(const SID* owner, const SID* me, AclObject what, const std::string& path);

// The same for a security descriptor and the user's SID in SDDL ("O:WD", "S-1-5-21-...").
std::string sddl_owner_problem(const std::string& sddl, const std::string& me_sid, AclObject what,
                               const std::string& path);

}  // namespace dlrt::core::platform::win
