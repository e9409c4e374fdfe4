// windows/acl.cc: see acl.hpp.
#include "platform/windows/acl.hpp"

#include <aclapi.h>
#include <sddl.h>

#include <fmt/format.h>

#include "platform/windows/text.hpp"

namespace dlrt::core::platform::win {
namespace {

struct WellKnown {
  WELL_KNOWN_SID_TYPE type;
  const char* name;
};
// The groups every local user belongs to.
constexpr WellKnown kAnyone[] = {
    {WinWorldSid, "Everyone"},
    {WinBuiltinUsersSid, "Users"},
    {WinAuthenticatedUserSid, "Authenticated Users"},
};

// The name of the group `sid` is, when it is one of kAnyone; nullptr otherwise.
const char* anyone_group(PSID sid) {
  for (const auto& g : kAnyone) {
    BYTE buf[SECURITY_MAX_SID_SIZE];
    DWORD size = sizeof(buf);
    if (::CreateWellKnownSid(g.type, nullptr, buf, &size) && ::EqualSid(sid, buf)) return g.name;
  }
  return nullptr;
}

// The rights that let someone change what is loaded from an object of kind `what`.
ACCESS_MASK dangerous_rights(AclObject what) {
  constexpr ACCESS_MASK kAlways = WRITE_DAC | WRITE_OWNER | GENERIC_WRITE | GENERIC_ALL;
  switch (what) {
    case AclObject::kPluginFile:
      return kAlways | FILE_WRITE_DATA | FILE_APPEND_DATA | DELETE;
    case AclObject::kPluginFolder:
      // FILE_ADD_FILE == FILE_WRITE_DATA and FILE_ADD_SUBDIRECTORY == FILE_APPEND_DATA on a
      // folder.
      return kAlways | FILE_ADD_FILE | FILE_ADD_SUBDIRECTORY | FILE_DELETE_CHILD | DELETE;
    case AclObject::kAncestorFolder:
      return kAlways | FILE_DELETE_CHILD | DELETE;
  }
  return kAlways;
}

// The dangerous rights of `mask` by name, e.g. "FILE_WRITE_DATA, DELETE".
std::string rights_text(ACCESS_MASK mask, AclObject what) {
  const bool folder = what != AclObject::kPluginFile;
  struct Named {
    ACCESS_MASK bit;
    const char* file;
    const char* folder;
  };
  constexpr Named kNames[] = {
      {GENERIC_ALL, "GENERIC_ALL", "GENERIC_ALL"},
      {GENERIC_WRITE, "GENERIC_WRITE", "GENERIC_WRITE"},
      {FILE_WRITE_DATA, "FILE_WRITE_DATA", "FILE_ADD_FILE"},
      {FILE_APPEND_DATA, "FILE_APPEND_DATA", "FILE_ADD_SUBDIRECTORY"},
      {FILE_DELETE_CHILD, "FILE_DELETE_CHILD", "FILE_DELETE_CHILD"},
      {DELETE, "DELETE", "DELETE"},
      {WRITE_DAC, "WRITE_DAC", "WRITE_DAC"},
      {WRITE_OWNER, "WRITE_OWNER", "WRITE_OWNER"},
  };
  std::string out;
  for (const auto& n : kNames)
    if ((mask & n.bit) != 0)
      out += fmt::format("{}{}", out.empty() ? "" : ", ", folder ? n.folder : n.file);
  return out;
}

const char* object_text(AclObject what) {
  switch (what) {
    case AclObject::kPluginFile:
      return "plugin";
    case AclObject::kPluginFolder:
      return "plugin folder";
    case AclObject::kAncestorFolder:
      return "folder";
  }
  return "object";
}

std::string sid_text(PSID sid) {
  wchar_t* text = nullptr;
  if (!::ConvertSidToStringSidW(sid, &text)) return "?";
  std::string out = narrow(text);
  ::LocalFree(text);
  return out;
}

}  // namespace

std::string acl_write_problem(const ACL* dacl, AclObject what, const std::string& path) {
  const char* kind = object_text(what);
  const char* expected =
      what == AclObject::kAncestorFolder
          ? "every folder above a plugin must keep Everyone, Users and Authenticated Users from "
            "renaming or deleting its entries (creating new ones is fine)"
          : "plugins and their folders must be writable only by their owner and administrators";
  if (dacl == nullptr)
    return fmt::format("{} {} has no DACL (a NULL DACL gives Everyone full access); {}", kind, path,
                       expected);
  ACL_SIZE_INFORMATION info{};
  if (!::GetAclInformation(const_cast<ACL*>(dacl), &info, sizeof(info), AclSizeInformation))
    return fmt::format("cannot read the DACL of {} {}: {}", kind, path,
                       error_text(::GetLastError()));
  const ACCESS_MASK dangerous = dangerous_rights(what);
  for (DWORD i = 0; i < info.AceCount; ++i) {
    void* ace = nullptr;
    if (!::GetAce(const_cast<ACL*>(dacl), i, &ace)) continue;
    const auto* header = static_cast<const ACE_HEADER*>(ace);
    if (header->AceType != ACCESS_ALLOWED_ACE_TYPE) continue;  // deny, audit, object ACEs
    if ((header->AceFlags & INHERIT_ONLY_ACE) != 0) continue;  // only for what is created inside
    const auto* allowed = static_cast<const ACCESS_ALLOWED_ACE*>(ace);
    PSID sid = const_cast<DWORD*>(&allowed->SidStart);
    const char* group = anyone_group(sid);
    if (group == nullptr) continue;
    const ACCESS_MASK bad = allowed->Mask & dangerous;
    if (bad == 0) continue;
    return fmt::format(
        "{} {} is writable by {}: its ACL entry {} (allow {} {}, mask 0x{:08X}) grants {}; {}",
        kind, path, group, i, group, sid_text(sid), static_cast<unsigned>(allowed->Mask),
        rights_text(bad, what), expected);
  }
  return "";
}

std::string sddl_write_problem(const std::string& sddl, AclObject what, const std::string& path) {
  PSECURITY_DESCRIPTOR sd = nullptr;
  if (!::ConvertStringSecurityDescriptorToSecurityDescriptorW(widen(sddl).c_str(), SDDL_REVISION_1,
                                                              &sd, nullptr))
    return fmt::format("security descriptor '{}' of {} is not valid SDDL: {}", sddl, path,
                       error_text(::GetLastError()));
  BOOL present = FALSE, defaulted = FALSE;
  ACL* dacl = nullptr;
  std::string problem;
  if (!::GetSecurityDescriptorDacl(sd, &present, &dacl, &defaulted))
    problem = fmt::format("cannot read the DACL of '{}': {}", sddl, error_text(::GetLastError()));
  else problem = acl_write_problem(present ? dacl : nullptr, what, path);
  ::LocalFree(sd);
  return problem;
}

std::string owner_problem(const SID* owner, const SID* me, AclObject what,
                          const std::string& path) {
  const char* kind = object_text(what);
  constexpr const char* kExpected =
      "plugins and their folders must be owned by the user running the program, SYSTEM, "
      "Administrators or TrustedInstaller";
  PSID o = const_cast<SID*>(owner);
  if (o == nullptr) return fmt::format("{} {} has no owner; {}", kind, path, kExpected);
  if (me != nullptr && ::EqualSid(o, const_cast<SID*>(me))) return "";
  for (WELL_KNOWN_SID_TYPE t : {WinLocalSystemSid, WinBuiltinAdministratorsSid}) {
    BYTE buf[SECURITY_MAX_SID_SIZE];
    DWORD size = sizeof(buf);
    if (::CreateWellKnownSid(t, nullptr, buf, &size) && ::EqualSid(o, buf)) return "";
  }
  // TrustedInstaller is a service SID (S-1-5-80-<hash of "TrustedInstaller">), not a well-known
  // type CreateWellKnownSid knows.
  if (sid_text(o) == "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464") return "";
  return fmt::format("{} {} is owned by {}, not by this user ({}); {}", kind, path, sid_text(o),
                     me != nullptr ? sid_text(const_cast<SID*>(me)) : "unknown", kExpected);
}

std::string sddl_owner_problem(const std::string& sddl, const std::string& me_sid, AclObject what,
                               const std::string& path) {
  PSECURITY_DESCRIPTOR sd = nullptr;
  if (!::ConvertStringSecurityDescriptorToSecurityDescriptorW(widen(sddl).c_str(), SDDL_REVISION_1,
                                                              &sd, nullptr))
    return fmt::format("security descriptor '{}' of {} is not valid SDDL: {}", sddl, path,
                       error_text(::GetLastError()));
  PSID me = nullptr;
  if (!::ConvertStringSidToSidW(widen(me_sid).c_str(), &me)) {
    ::LocalFree(sd);
    return fmt::format("'{}' is not a valid SID: {}", me_sid, error_text(::GetLastError()));
  }
  PSID owner = nullptr;
  BOOL defaulted = FALSE;
  std::string problem;
  if (!::GetSecurityDescriptorOwner(sd, &owner, &defaulted))
    problem = fmt::format("cannot read the owner of '{}': {}", sddl, error_text(::GetLastError()));
  else problem = owner_problem(static_cast<SID*>(owner), static_cast<SID*>(me), what, path);
  ::LocalFree(me);
  ::LocalFree(sd);
  return problem;
}

}  // namespace dlrt::core::platform::win
